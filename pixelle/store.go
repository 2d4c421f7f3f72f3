package pixelle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/hubdev/hub/hub"
)

// credentialsFile is the agent client's private file name.
const credentialsFile = "agent.json"

// CredentialStore keeps the agent's {sessionId, token, url} in a 0600 file
// inside a 0700 per-user directory under the hub's state dir — never in the
// project folder, which may be synced or shared.
type CredentialStore struct{ store hub.SecretStore }

// NewCredentialStore uses $XDG_STATE_HOME/hub/pixelle.
func NewCredentialStore(d hub.Dirs) *CredentialStore {
	return &CredentialStore{store: hub.SecretStore{Dir: filepath.Join(d.State, "pixelle")}}
}

// Path is the credentials file.
func (c *CredentialStore) Path() string { return c.store.Path(credentialsFile) }

// Save writes cr atomically with mode 0600.
func (c *CredentialStore) Save(cr Credentials) error {
	b, err := json.Marshal(cr)
	if err != nil {
		return err
	}
	return c.store.Write(credentialsFile, b)
}

// errNotPaired means no credentials are stored.
var errNotPaired = errors.New("not paired")

// Load reads the stored credentials. A file others could have planted or
// read (a link, another owner, a loose mode) is refused: the token may
// have leaked (hub.ReadPrivateFile).
func (c *CredentialStore) Load() (Credentials, error) {
	path := c.Path()
	b, err := c.store.Read(credentialsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Credentials{}, errNotPaired
	}
	if err != nil {
		return Credentials{}, err
	}
	var cr Credentials
	if err := json.Unmarshal(b, &cr); err != nil || cr.SessionID == "" || cr.Token == "" {
		return Credentials{}, fmt.Errorf("%s is damaged; pair again", path)
	}
	return cr, nil
}
