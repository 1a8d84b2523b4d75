package gateway

import (
	"fmt"
	"strings"
)

// This file says what each nginx limit counts by (docs/gateways.md, "Each
// limit's own key"). ngx_http_limit_req_handler evaluates each zone's key
// (a complex value: variables and text) per request and looks the limit up
// under that value, so two zones on different variables count apart. In an
// imported row:
//
//   - the first variable key of the scopes imported is the request's key
//     (replay takes it from the log with --key-field): its limits count
//     by the default, key;
//   - a key with no variable, or $server_name (one value for every request
//     a server block answers, and a row is one server's scope), counts
//     every request together: by: global;
//   - any other variable counts by an attribute named after it
//     (remote_addr, http_x_client, uri...).

// zoneConstant reports whether the zone's key is one value for every
// request of one server block: text without variables, or $server_name.
func zoneConstant(z *NginxZone) bool {
	switch k := z.Key; {
	case !strings.Contains(k, "$"):
		return true
	case k == "$server_name" || k == "${server_name}":
		return true
	}
	return false
}

// primaryKey is the request's key of an import of scopes: the key of the
// first zone, in the order of the scopes and their limit_req, that is not
// constant; ok is false when every zone's key is.
func primaryKey(scopes []*NginxScope) (Key, bool) {
	for _, s := range scopes {
		for _, l := range s.Limits {
			if !zoneConstant(l.Zone) && l.Zone.Map == nil {
				return nginxKey(l.Zone), true
			}
		}
	}
	return Key{}, false
}

// sameKey reports whether a and b are the same key of a request, whatever
// the variable that reads it ($remote_addr and $binary_remote_addr are
// both the address).
func sameKey(a, b Key) bool { return a.Kind == b.Kind && a.Name == b.Name && a.cond == b.cond }

// zoneBy is the by: of a limit on zone z when primary is the request's key
// (ok false: there is none): "" for the key, "global", or the attribute
// named after z's variable.
func zoneBy(z *NginxZone, primary Key, ok bool) string {
	switch {
	case zoneConstant(z):
		return "global"
	case ok && sameKey(nginxKey(z), primary):
		return ""
	}
	return attrName(nginxKey(z))
}

// attrName names the attribute of a key that is not the request's
// (Key.attr).
func attrName(k Key) string { return k.attr() }

// byComment says in a member's comment what by: means for it.
func byComment(z *NginxZone, by string) string {
	switch by {
	case "":
		return ""
	case "global":
		if z.Key == "$server_name" || z.Key == "${server_name}" {
			return "; $server_name is one value in this server: every request counts together (by: global)"
		}
		return fmt.Sprintf("; %s holds no variable: every request counts together (by: global)", z.Key)
	}
	if m := z.Map; m != nil {
		return fmt.Sprintf("; counts by %s, the map of %s at line %d: a request whose value is empty is not limited here (by: %s)", z.Key, m.Source, m.Where.Line, by)
	}
	return fmt.Sprintf("; counts by %s, not by the request's key (by: %s)", z.Key, by)
}
func (*Nginx) keyedLimits() {}
