package companion

import (
	"encoding/hex"
	"net/http"
	"slices"
	"time"
)

// Overview is what the operator sees: requests waiting for approval and
// paired devices with their live bindings.
type Overview struct {
	Pending []PendingView `json:"pending"`
	Devices []DeviceView  `json:"devices"`
	LeaseMS int64         `json:"leaseMs"`
	// Unavailable says why no device is trusted ("" when all is well).
	Unavailable string `json:"unavailable,omitempty"`
}

// PendingView is a pairing request waiting for the operator. Code is the
// one the extension's popup shows.
type PendingView struct {
	Request string    `json:"request"`
	Device  string    `json:"device"`
	Name    string    `json:"name"`
	Code    string    `json:"code"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// DeviceView is a paired device.
type DeviceView struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Paired   time.Time     `json:"paired"`
	LastSeen time.Time     `json:"lastSeen"`
	Bindings []BindingView `json:"bindings"`
}

// BindingView is a live binding of a device.
type BindingView struct {
	ID           string    `json:"id"`
	Project      string    `json:"project"`
	Session      string    `json:"session"`
	Conversation string    `json:"conversation"`
	Created      time.Time `json:"created"`
	LeaseUntil   time.Time `json:"leaseUntil"`
}

// Overview lists pending requests (oldest first) and devices (in pairing
// order) with their live bindings.
func (s *Service) Overview() Overview {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.pruneRequestsLocked(now)
	ov := Overview{Pending: []PendingView{}, Devices: []DeviceView{}, LeaseMS: s.o.Lease.Milliseconds()}
	if s.broken != nil {
		ov.Unavailable = s.broken.Error()
	}
	for _, r := range s.requests {
		if r.state == statePending && now.Before(r.expires) {
			ov.Pending = append(ov.Pending, PendingView{Request: r.id, Device: r.device, Name: r.name, Code: r.code, Created: r.created.UTC(), Expires: r.expires.UTC()})
		}
	}
	slices.SortFunc(ov.Pending, func(a, b PendingView) int { return a.Created.Compare(b.Created) })
	for _, d := range s.devices {
		dv := DeviceView{ID: d.rec.ID, Name: d.rec.Name, Paired: d.rec.Paired, LastSeen: d.rec.LastSeen, Bindings: []BindingView{}}
		for _, b := range s.live {
			if b.rec.Device == d.rec.ID && now.Before(b.lease.until()) {
				dv.Bindings = append(dv.Bindings, BindingView{ID: b.rec.ID, Project: b.rec.Project, Session: b.rec.Session,
					Conversation: b.rec.Conversation, Created: b.rec.Created, LeaseUntil: b.lease.until().UTC()})
			}
		}
		slices.SortFunc(dv.Bindings, func(a, b BindingView) int { return a.Created.Compare(b.Created) })
		ov.Devices = append(ov.Devices, dv)
	}
	slices.SortFunc(ov.Devices, func(a, b DeviceView) int { return a.Paired.Compare(b.Paired) })
	return ov
}

// Approve pairs the device of a pending request.
func (s *Service) Approve(request string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.pendingLocked(request)
	if err != nil {
		return err
	}
	if s.broken != nil {
		return errorf(http.StatusServiceUnavailable, "companion_unavailable", "companion.json is unreadable (%v); fix or remove it first", s.broken)
	}
	if len(s.devices) >= MaxDevices {
		return errorf(http.StatusConflict, "too_many_devices", "at most %d devices may be paired; revoke one first", MaxDevices)
	}
	now := s.now().UTC()
	d := &device{rec: deviceRecord{ID: r.device, Name: r.name, Hash: hex.EncodeToString(r.hash[:]), Paired: now, LastSeen: now}, hash: r.hash}
	s.devices[d.rec.ID] = d
	if err := s.saveLocked(); err != nil {
		delete(s.devices, d.rec.ID)
		return errorf(http.StatusInternalServerError, "internal", "the device could not be saved: %v", err)
	}
	r.state = stateApproved
	s.o.Log.Info("companion device paired", "device", d.rec.ID, "name", d.rec.Name)
	return nil
}

// Refuse refuses a pending request.
func (s *Service) Refuse(request string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.pendingLocked(request)
	if err != nil {
		return err
	}
	r.state = stateRefused
	s.o.Log.Info("companion pairing refused", "request", r.id, "name", r.name)
	return nil
}

func (s *Service) pendingLocked(id string) (*pairRequest, error) {
	r := s.requests[id]
	if r == nil {
		return nil, errorf(http.StatusNotFound, "request_not_found", "no pairing request %s", id)
	}
	if r.state != statePending || !s.now().Before(r.expires) {
		return nil, errorf(http.StatusConflict, "request_not_pending", "pairing request %s is %s", id, r.stateAt(s.now()))
	}
	return r, nil
}

// Revoke unpairs a device: every binding of it ends at once.
func (s *Service) Revoke(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.devices[id]
	if d == nil {
		return errorf(http.StatusNotFound, "device_not_found", "no paired device %s", id)
	}
	for _, b := range s.live {
		if b.rec.Device == id {
			s.endLocked(b, "device revoked")
		}
	}
	delete(s.devices, id)
	if err := s.saveLocked(); err != nil {
		return errorf(http.StatusInternalServerError, "internal", "the device was revoked for this run but companion.json could not be written: %v", err)
	}
	s.o.Log.Info("companion device revoked", "device", id, "name", d.rec.Name)
	return nil
}

// stateAt is the request's state as its device sees it at now.
func (r *pairRequest) stateAt(now time.Time) string {
	if r.state == statePending && !now.Before(r.expires) {
		return stateExpired
	}
	return r.state
}

// pruneRequestsLocked forgets requests a device can no longer need (past
// twice their lifetime), then the oldest answered or expired ones beyond
// maxRequests.
func (s *Service) pruneRequestsLocked(now time.Time) {
	for id, r := range s.requests {
		if now.Sub(r.expires) > PairTTL {
			delete(s.requests, id)
		}
	}
	for len(s.requests) > maxRequests {
		var oldest *pairRequest
		for _, r := range s.requests {
			if r.stateAt(now) != statePending && (oldest == nil || r.created.Before(oldest.created)) {
				oldest = r
			}
		}
		if oldest == nil {
			return
		}
		delete(s.requests, oldest.id)
	}
}

func (s *Service) pendingCountLocked(now time.Time) int {
	n := 0
	for _, r := range s.requests {
		if r.stateAt(now) == statePending {
			n++
		}
	}
	return n
}
