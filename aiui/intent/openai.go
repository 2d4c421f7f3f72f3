package intent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
)

// OpenAI is an OpenAI-compatible REST client for the two paid seams:
// transcription (POST {BaseURL}/audio/transcriptions) and the correction
// diff (POST {BaseURL}/chat/completions). The key comes from the
// environment; it is never logged.
type OpenAI struct {
	BaseURL string
	Key     string
	// KeyEnv names the variable the key came from, for degraded-path notes.
	KeyEnv string
	HTTP   *http.Client
}

// ErrNoKey is the cause when the key variable is empty.
var ErrNoKey = errors.New("API key not set")

// maxAnswerBytes bounds what the upstream may send back.
const maxAnswerBytes = 4 << 20

func (o *OpenAI) client() *http.Client {
	if o.HTTP != nil {
		return o.HTTP
	}
	return &http.Client{Timeout: 60 * time.Second}
}

func (o *OpenAI) noKey() error {
	env := o.KeyEnv
	if env == "" {
		env = "OPENAI_API_KEY"
	}
	return fmt.Errorf("%w: %s is empty", ErrNoKey, env)
}

// Transcribe uploads one audio segment (size bytes read from audio) and
// returns its transcript. The form streams: only its small head and tail
// are built in memory, so a segment in flight costs no copy of its bytes
// however slow the upstream is.
func (o *OpenAI) Transcribe(ctx context.Context, model, filename string, audio io.Reader, size int64) (string, error) {
	if o.Key == "" {
		return "", o.noKey()
	}
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	mw.WriteField("model", model)
	mw.WriteField("response_format", "json")
	if _, err := mw.CreateFormFile("file", filename); err != nil {
		return "", err
	}
	// the file's bytes go between what CreateFormFile and Close write
	cut := head.Len()
	mw.Close()
	form := head.Bytes()
	body := io.MultiReader(bytes.NewReader(form[:cut]), io.LimitReader(audio, size), bytes.NewReader(form[cut:]))
	n := int64(len(form)) + size
	var out struct {
		Text string `json:"text"`
	}
	if err := o.post(ctx, "/audio/transcriptions", mw.FormDataContentType(), body, n, &out); err != nil {
		return "", err
	}
	return out.Text, nil
}

// correctionSystem instructs the model to answer with a V4A patch only.
const correctionSystem = `You fix dictated transcripts. The document is the file "transcript", one segment per line. ` +
	`Apply the user's correction and answer with a V4A patch only, exactly in this shape:
*** Begin Patch
*** Update File: transcript
@@
-<old line>
+<new line>
*** End Patch`

// Correct asks for a V4A patch that applies instruction to the span
// original of doc.
func (o *OpenAI) Correct(ctx context.Context, model, doc, original, instruction string) (string, error) {
	if o.Key == "" {
		return "", o.noKey()
	}
	req := map[string]any{
		"model":       model,
		"temperature": 0,
		"messages": []map[string]string{
			{"role": "system", "content": correctionSystem},
			{"role": "user", "content": fmt.Sprintf("Document:\n%s\n\nSpan: %q\nCorrection: %q", doc, original, instruction)},
		},
	}
	b, _ := json.Marshal(req)
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := o.post(ctx, "/chat/completions", "application/json", bytes.NewReader(b), int64(len(b)), &out); err != nil {
		return "", err
	}
	if len(out.Choices) == 0 {
		return "", errors.New("correction answer has no choices")
	}
	return strings.TrimSpace(out.Choices[0].Message.Content), nil
}

// post sends body (size bytes) and decodes the JSON answer into out.
func (o *OpenAI) post(ctx context.Context, path, ctype string, body io.Reader, size int64, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(o.BaseURL, "/")+path, body)
	if err != nil {
		return err
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+o.Key)
	resp, err := o.client().Do(req)
	if err != nil {
		return fmt.Errorf("upstream request failed: %v", redactURLError(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return fmt.Errorf("reading upstream answer: %v", err)
	}
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(b))
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
			msg = e.Error.Message
		}
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return fmt.Errorf("upstream answered %d: %s", resp.StatusCode, msg)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("upstream answer is not JSON: %v", err)
	}
	return nil
}

// redactURLError keeps the cause of a transport error; the URL carries no
// secret, but the error text is kept short for the note.
func redactURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// ExtForMime names an upload/blob file extension after a MIME type, which
// is how the STT endpoint sniffs the codec.
func ExtForMime(mime string) string {
	base := strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0]))
	switch base {
	case "image/png":
		return "png"
	case "image/jpeg":
		return "jpg"
	case "image/webp":
		return "webp"
	case "audio/webm", "video/webm":
		return "webm"
	case "audio/wav", "audio/x-wav", "audio/wave":
		return "wav"
	case "audio/ogg":
		return "ogg"
	case "audio/mpeg":
		return "mp3"
	case "audio/mp4", "audio/m4a", "audio/x-m4a":
		return "m4a"
	case "audio/flac":
		return "flac"
	case "audio/pcm", "audio/l16":
		return "pcm"
	}
	return "bin"
}
