package sessionsjson

// DetectGateway cannot tell on Windows whether a gateway runs on h: the runtime's evidence
// (an flock on gateway.lock, a live pid's command line under /proc) has no Windows
// counterpart here. It reports a running gateway, so that routing-index writes are refused
// (exit 3) unless --force says the operator has stopped it.
func DetectGateway(Home) GatewayStatus {
	return GatewayStatus{Running: true, Method: MethodUnsupported,
		Detail: "cannot tell on windows whether a gateway runs (no flock or /proc to probe); assuming it does: stop it, then use --force"}
}
