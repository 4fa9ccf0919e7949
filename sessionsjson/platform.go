package sessionsjson

// knownPlatforms is the July 2026 gateway Platform enum (upstream gateway/config.py Platform, as of c2a3b9ce5).
var knownPlatforms = map[string]bool{
	"local": true, "telegram": true, "discord": true, "whatsapp": true, "whatsapp_cloud": true,
	"slack": true, "signal": true, "mattermost": true, "matrix": true, "homeassistant": true,
	"email": true, "sms": true, "dingtalk": true, "api_server": true, "webhook": true,
	"msgraph_webhook": true, "feishu": true, "wecom": true, "wecom_callback": true,
	"weixin": true, "bluebubbles": true, "qqbot": true, "yuanbao": true, "relay": true,
}

// IsKnownPlatform reports whether p is a value of the runtime's built-in Platform enum.
func IsKnownPlatform(p string) bool {
	return knownPlatforms[p]
}

// LooksLikePluginPlatform reports whether an unknown platform value has the shape of a
// plugin platform name (lower-case ^[a-z][a-z0-9_]*$). The runtime accepts such names only
// when the plugin is registered, so the CLI treats them as warnings.
func LooksLikePluginPlatform(p string) bool {
	if p == "" || p[0] < 'a' || p[0] > 'z' {
		return false
	}
	for i := 1; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
