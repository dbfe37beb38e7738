package api

import "time"

// SetTimeouts replaces s's reply timeout and shutdown grace period for a
// test; 0 keeps the default.
func (s *Server) SetTimeouts(reply, grace time.Duration) { s.replyTimeout, s.grace = reply, grace }
