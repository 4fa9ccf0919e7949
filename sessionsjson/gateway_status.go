package sessionsjson

// Gateway detection methods.
const (
	MethodLockHeld     = "gateway.lock held"
	MethodLockFree     = "gateway.lock free"
	MethodPIDFile      = "gateway.pid"
	MethodGatewayState = "gateway_state.json"
	MethodNone         = "no gateway files"
	MethodUnsupported  = "unsupported"
)

// GatewayStatus says whether a gateway is running on a home and how that was decided.
type GatewayStatus struct {
	// Running is true when a gateway owns the home.
	Running bool
	// Method is the evidence used (one of the Method constants).
	Method string
	// PID is the gateway's pid when known.
	PID int
	// Detail explains the decision in one line.
	Detail string
}
