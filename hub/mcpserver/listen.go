package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A stateless client (SEP-2575, protocol 2026-07-28) takes
// notifications/tools/list_changed only on a subscriptions/listen stream
// it opened for them, stamped with that stream's request id in _meta. The
// SDK sends those only for changes of its own registry, and the Server
// drops the SDK's list_changed anyway (dropSDKListChanged) to send one per
// change itself: so it keeps the streams, as the SDK acknowledges them.

const (
	methodSubscriptionsListen = "subscriptions/listen"
	methodSubscriptionsAcked  = "notifications/subscriptions/acknowledged"
)

// noteListen records a tools list_changed stream from the SDK's
// acknowledgement of it, just written (Write holds readyMu, so that no
// notification on the stream can precede its acknowledgement).
func (s *session) noteListen(params json.RawMessage) {
	var p struct {
		Meta          map[string]any `json:"_meta"`
		Notifications struct {
			ToolsListChanged bool `json:"toolsListChanged"`
		} `json:"notifications"`
	}
	if json.Unmarshal(params, &p) != nil || !p.Notifications.ToolsListChanged {
		return
	}
	id, err := jsonrpc.MakeID(p.Meta[mcp.MetaKeySubscriptionID])
	if err != nil || !id.IsValid() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, open := s.inflight[id]; open { // not already ended
		s.listens[id] = true
	}
}

// listenIDs are the open tools list_changed streams.
func (s *session) listenIDs() []jsonrpc.ID {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]jsonrpc.ID, 0, len(s.listens))
	for id := range s.listens {
		ids = append(ids, id)
	}
	return ids
}

// notifyListens sends list_changed on each open stream.
func (s *session) notifyListens(ctx context.Context) error {
	for _, id := range s.listenIDs() {
		params, err := json.Marshal(map[string]any{"_meta": map[string]any{mcp.MetaKeySubscriptionID: id.Raw()}})
		if err != nil {
			return err
		}
		if err := s.conn.Write(ctx, &jsonrpc.Request{Method: methodToolsListChanged, Params: params}); err != nil {
			return err
		}
	}
	return nil
}
