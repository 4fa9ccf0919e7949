package statedb

// End reasons the runtime writes to sessions.end_reason that its rules look at.
const (
	// EndReasonCompression ends a session whose context was compressed into a continuation
	// (a child row); the compression tip rule follows it.
	EndReasonCompression = "compression"
	// EndReasonAgentClose ends a session the agent closed; recovery reopens it.
	EndReasonAgentClose = "agent_close"
	// EndReasonWSOrphanReap ends a session reaped with its websocket; recoverable since
	// 2026-07-14 (ca907480a).
	EndReasonWSOrphanReap = "ws_orphan_reap"
)

// Recoverable reports an end_reason the runtime's recovery reopens instead of dropping the
// mapping (gateway/session.py, ca907480a).
func Recoverable(endReason string) bool {
	return endReason == EndReasonAgentClose || endReason == EndReasonWSOrphanReap
}
