package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/internal/app/server"
	"github.com/slotd/slotd/internal/setting"
)

// serveConfig is what slotd serve's settings fill: the server's Config,
// and the few settings that are said in other words on the command line
// than in Config (finish turns them into it).
type serveConfig struct {
	server.Config
	mcpOn, consoleOn bool
	// clientClock is window or trust (Session.TrustClientClock).
	clientClock string
	// memoryLimit is --memory-limit as given: a size, auto or off.
	memoryLimit string
}

// serveSetting is one setting of slotd serve. serveSettings is the one list
// of them: serve's flags, their environment twins, --help and
// --print-config are made from it, and a test holds it against README's
// table.
type serveSetting struct {
	// flag is the flag's name, env its environment twin.
	flag, env string
	// field is the setting's path in server.Config ("Session.TTL"), by
	// which Config.Validate names it; "" for one serve resolves itself.
	field string
	// def is serve's default, as the flag takes it, or fromConfig: the
	// value server.Config.WithDefaults gives. "" when the default is the
	// zero value, which zero then says the meaning of.
	def string
	// zero is what the zero value (0, empty, false) means when it is a
	// value one may give; "" when zero is not a value of the setting
	// (serve refuses a zero number or duration).
	zero string
	// doc is the flag's usage.
	doc string
	// secret hides the value in --print-config: a function that shows
	// what may be shown of it.
	secret func(string) string
	// bind is the setting's place in a serveConfig: a *string, *int,
	// *bool or *time.Duration.
	bind func(*serveConfig) any
}

// fromConfig as a setting's default takes server.Config.WithDefaults'.
const fromConfig = "(server.Config.WithDefaults)"

// serveSettings are slotd serve's settings, in the order --print-config
// lists them (--help sorts them by name).
var serveSettings = []serveSetting{
	{flag: "listen", env: "SLOTD_LISTEN", field: "Listen", def: fromConfig,
		doc: "gRPC address", bind: func(c *serveConfig) any { return &c.Listen }},
	{flag: "http-listen", env: "SLOTD_HTTP_LISTEN", field: "HTTPListen", def: "127.0.0.1:8080", zero: "no HTTP listener",
		doc: "HTTP/JSON gateway and /mcp address; empty serves none", bind: func(c *serveConfig) any { return &c.HTTPListen }},
	{flag: "mcp", env: "SLOTD_MCP", field: "DisableMCP", def: "true", zero: "no /mcp",
		doc: "serve MCP (Streamable HTTP) at /mcp on the HTTP listener; --mcp=false turns it off", bind: func(c *serveConfig) any { return &c.mcpOn }},
	{flag: "console", env: "SLOTD_CONSOLE", field: "DisableConsole", def: "true", zero: "no /console/",
		doc: "serve the ops console at /console/ on the HTTP listener (sign-in with an admin key); --console=false turns it off", bind: func(c *serveConfig) any { return &c.consoleOn }},
	{flag: "mcp-max-sessions", env: "SLOTD_MCP_MAX_SESSIONS", field: "MCP.MaxSessions", def: fromConfig,
		doc: "MCP sessions held at once, of all tenants; past it a new one gets 503", bind: func(c *serveConfig) any { return &c.MCP.MaxSessions }},
	{flag: "mcp-max-tenant-sessions", env: "SLOTD_MCP_MAX_TENANT_SESSIONS", field: "MCP.MaxTenantSessions", def: fromConfig,
		doc: "MCP sessions of one tenant; past it the tenant's least recently used idle one closes, or a new one gets 429 when none is idle", bind: func(c *serveConfig) any { return &c.MCP.MaxTenantSessions }},
	{flag: "mcp-session-idle", env: "SLOTD_MCP_SESSION_IDLE", field: "MCP.SessionIdle", def: fromConfig,
		doc: "idle time after which an MCP session closes", bind: func(c *serveConfig) any { return &c.MCP.SessionIdle }},
	{flag: "mcp-max-tenant-forms", env: "SLOTD_MCP_MAX_TENANT_FORMS", field: "MCP.MaxTenantForms", def: fromConfig,
		doc: "MCP tool calls of one tenant waiting on a form; past it a call hands its question to the model", bind: func(c *serveConfig) any { return &c.MCP.MaxTenantForms }},
	{flag: "mcp-max-session-forms", env: "SLOTD_MCP_MAX_SESSION_FORMS", field: "MCP.MaxSessionForms", def: fromConfig,
		doc: "MCP tool calls of one session waiting on a form; past it a call hands its question to the model", bind: func(c *serveConfig) any { return &c.MCP.MaxSessionForms }},
	{flag: "mcp-form-timeout", env: "SLOTD_MCP_FORM_TIMEOUT", field: "MCP.FormTimeout", def: fromConfig,
		doc: "time a user has to answer one MCP form", bind: func(c *serveConfig) any { return &c.MCP.FormTimeout }},
	{flag: "contracts", env: "SLOTD_CONTRACTS", field: "Contracts", def: fromConfig,
		doc: "folder of contract files (*.json)", bind: func(c *serveConfig) any { return &c.Contracts }},
	{flag: "store", env: "SLOTD_STORE", field: "Store", def: fromConfig,
		doc: "postgres, or memory for a demo that keeps nothing", bind: func(c *serveConfig) any { return &c.Store }},
	{flag: "database-url", env: "SLOTD_DATABASE_URL", field: "DatabaseURL", zero: "none; required with the postgres store", secret: redactDatabaseURL,
		doc: "Postgres connection string, e.g. postgres://user@127.0.0.1:5432/slotd", bind: func(c *serveConfig) any { return &c.DatabaseURL }},
	{flag: "create-database", env: "SLOTD_CREATE_DATABASE", field: "CreateDatabase", zero: "a missing database stops slotd",
		doc: "create the database of --database-url when the server does not have it (the role needs CREATEDB); without it slotd stops and says how to create it", bind: func(c *serveConfig) any { return &c.CreateDatabase }},
	{flag: "http-max-unauth-conns", env: "SLOTD_HTTP_MAX_UNAUTH_CONNS", field: "HTTPMaxUnauthConns", def: fromConfig,
		doc: "HTTP connections that have not authenticated a request yet, in all; more are closed as they come", bind: func(c *serveConfig) any { return &c.HTTPMaxUnauthConns }},
	{flag: "http-max-unauth-conns-per-source", env: "SLOTD_HTTP_MAX_UNAUTH_CONNS_PER_SOURCE", field: "HTTPMaxUnauthConnsPerSource", def: fromConfig,
		doc: "HTTP connections that have not authenticated a request yet, per client IP address; more are closed as they come", bind: func(c *serveConfig) any { return &c.HTTPMaxUnauthConnsPerSource }},
	{flag: "memory-limit", env: "SLOTD_MEMORY_LIMIT", def: "auto",
		doc: "soft limit of the Go heap (as GOMEMLIMIT: 512MiB, 2GiB); auto: GOMEMLIMIT when set, else 3/4 of the memory the cgroup or the machine gives; off: none", bind: func(c *serveConfig) any { return &c.memoryLimit }},
	{flag: "api-keys", env: "SLOTD_API_KEYS", field: "APIKeys", zero: "no tenant keys: loopback only, every caller the default tenant", secret: redactKeys,
		doc: "tenant keys, tenant:key,tenant:key, each key at least 16 characters; without keys slotd listens on loopback only", bind: func(c *serveConfig) any { return &c.APIKeys }},
	{flag: "admin-keys", env: "SLOTD_ADMIN_KEYS", field: "AdminKeys", zero: "no admin keys", secret: redactKeys,
		doc: "AdminService keys, key,key or name:key,name:key, each at least 16 characters; turns still need a tenant key", bind: func(c *serveConfig) any { return &c.AdminKeys }},
	{flag: "stale-after", env: "SLOTD_STALE_AFTER", field: "Session.StaleAfter", def: "30m", zero: "sessions never go stale",
		doc: "idle time before a turn asks whether to resume, for contracts without x-slotd.stale_after", bind: func(c *serveConfig) any { return &c.Session.StaleAfter }},
	{flag: "ttl", env: "SLOTD_TTL", field: "Session.TTL", def: "24h", zero: "sessions never expire",
		doc: "idle time after which a session expires, for contracts without x-slotd.ttl", bind: func(c *serveConfig) any { return &c.Session.TTL }},
	{flag: "max-attempts", env: "SLOTD_MAX_ATTEMPTS", field: "Session.MaxAttempts", def: fromConfig,
		doc: "failed attempts per slot before the conversation is handed to a person, for slots without x-slotd.max_attempts", bind: func(c *serveConfig) any { return &c.Session.MaxAttempts }},
	{flag: "max-open-sessions", env: "SLOTD_MAX_OPEN_SESSIONS", field: "Session.MaxOpenSessions", def: fromConfig,
		doc: "open sessions a conversation may hold, one per tool; past it the least recently used ends", bind: func(c *serveConfig) any { return &c.Session.MaxOpenSessions }},
	{flag: "retention", env: "SLOTD_RETENTION", field: "Retention", def: "720h", zero: "ended sessions are kept",
		doc: "how long ended sessions and their history are kept; 0 keeps them", bind: func(c *serveConfig) any { return &c.Retention }},
	{flag: "janitor-interval", env: "SLOTD_JANITOR_INTERVAL", field: "JanitorInterval", def: "1m", zero: "no janitor",
		doc: "how often expired sessions are ended and old ones purged; 0 turns it off", bind: func(c *serveConfig) any { return &c.JanitorInterval }},
	{flag: "max-inflight", env: "SLOTD_MAX_INFLIGHT", field: "Limits.MaxInFlight", def: fromConfig,
		doc: "SlotService calls in flight at once; more are refused with RESOURCE_EXHAUSTED and a retry advice", bind: func(c *serveConfig) any { return &c.Limits.MaxInFlight }},
	{flag: "tenant-max-inflight", env: "SLOTD_TENANT_MAX_INFLIGHT", field: "Limits.TenantMaxInFlight", zero: "--max-inflight divided evenly among the tenants of --api-keys",
		doc: "one tenant's share of --max-inflight; its calls past it are refused while other tenants' are served; 0 divides --max-inflight evenly among the tenants of --api-keys", bind: func(c *serveConfig) any { return &c.Limits.TenantMaxInFlight }},
	{flag: "tenant-limits", env: "SLOTD_TENANT_LIMITS", field: "TenantLimits", zero: "every tenant's share is --tenant-max-inflight",
		doc: "tenants whose share is not --tenant-max-inflight, tenant:n,tenant:n", bind: func(c *serveConfig) any { return &c.TenantLimits }},
	{flag: "shutdown-timeout", env: "SLOTD_SHUTDOWN_TIMEOUT", field: "ShutdownTimeout", def: fromConfig,
		doc: "how long in-flight calls may take to finish on SIGTERM or Ctrl-C", bind: func(c *serveConfig) any { return &c.ShutdownTimeout }},
	{flag: "metrics-listen", env: "SLOTD_METRICS_LISTEN", field: "MetricsListen", def: "127.0.0.1:9464", zero: "no metrics listener",
		doc: "address of /metrics, /healthz and /readyz; empty serves none", bind: func(c *serveConfig) any { return &c.MetricsListen }},
	{flag: "pprof", env: "SLOTD_PPROF", field: "Pprof", zero: "no /debug/pprof/",
		doc: "serve net/http/pprof under /debug/pprof/ on the metrics listener", bind: func(c *serveConfig) any { return &c.Pprof }},
	{flag: "tls-cert", env: "SLOTD_TLS_CERT", field: "TLS.Cert", zero: "plaintext listeners",
		doc: "PEM certificate (chain) of every listener; with it they speak TLS 1.2+", bind: func(c *serveConfig) any { return &c.TLS.Cert }},
	{flag: "tls-key", env: "SLOTD_TLS_KEY", field: "TLS.Key", zero: "no key (none with no certificate)",
		doc: "PEM private key of --tls-cert", bind: func(c *serveConfig) any { return &c.TLS.Key }},
	{flag: "tls-client-ca", env: "SLOTD_TLS_CLIENT_CA", field: "TLS.ClientCA", zero: "no client certificates asked",
		doc: "PEM CA certificates; clients must present a certificate one of them signed (mutual TLS)", bind: func(c *serveConfig) any { return &c.TLS.ClientCA }},
	{flag: "allow-plaintext", env: "SLOTD_ALLOW_PLAINTEXT", field: "AllowPlaintext", zero: "plaintext only on loopback",
		doc: "allow plaintext listeners beyond loopback, when TLS ends in front of slotd", bind: func(c *serveConfig) any { return &c.AllowPlaintext }},
	{flag: "client-clock", env: "SLOTD_CLIENT_CLOCK", field: "Session.TrustClientClock", def: "window",
		doc: "window: a turn's now must be within 5m of the server's clock; trust: any now (replays, scripts, tests)", bind: func(c *serveConfig) any { return &c.clientClock }},
}

// declareServe declares every setting's flag on fs, each starting at its
// default, filling c.
func declareServe(fs *flags, c *serveConfig) {
	defaults := serveConfig{Config: server.Config{}.WithDefaults()}
	for _, s := range serveSettings {
		p := s.bind(c)
		def := s.def
		if def == fromConfig {
			def = show(s.bind(&defaults))
		}
		switch p := p.(type) {
		case *string:
			fs.String(p, s.flag, s.env, def, s.doc)
		case *bool:
			fs.Bool(p, s.flag, s.env, def == "true", s.doc)
		case *int:
			n, err := strconv.Atoi(cmp(def, "0"))
			mustDefault(s, err)
			fs.Int(p, s.flag, s.env, n, s.doc)
		case *time.Duration:
			d, err := time.ParseDuration(cmp(def, "0s"))
			mustDefault(s, err)
			fs.Duration(p, s.flag, s.env, d, s.doc)
		default:
			panic(fmt.Sprintf("setting --%s: a %T has no flag", s.flag, p))
		}
	}
}

func cmp(v, zero string) string {
	if v == "" {
		return zero
	}
	return v
}

func mustDefault(s serveSetting, err error) {
	if err != nil {
		panic(fmt.Sprintf("setting --%s: default %q: %v", s.flag, s.def, err))
	}
}

// show is a setting's value as its flag takes it.
func show(p any) string {
	switch p := p.(type) {
	case *string:
		return *p
	case *bool:
		return strconv.FormatBool(*p)
	case *int:
		return strconv.Itoa(*p)
	case *time.Duration:
		return p.String()
	}
	panic(fmt.Sprintf("a setting of %T", p))
}

// isZero reports whether a setting holds its zero value.
func isZero(p any) bool {
	switch v := show(p); v {
	case "", "false", "0", "0s":
		return true
	}
	return false
}

// finish turns what the command line says in its own words into the
// server's Config, refuses a zero where zero is no value of a setting, and
// checks the rest with server.Config.Validate, naming the flag and the
// variable of a setting at fault.
func (c *serveConfig) finish(getenv func(string) string, machine func() int64) error {
	c.DisableMCP = !c.mcpOn
	c.DisableConsole = !c.consoleOn
	if err := oneOf("client-clock", c.clientClock, []string{"window", "trust"}); err != nil {
		return err
	}
	c.Session.TrustClientClock = c.clientClock == "trust"
	if err := oneOf("store", c.Store, []string{"postgres", "memory"}); err != nil {
		return err
	}
	for _, s := range serveSettings {
		if s.zero != "" || !isZero(s.bind(c)) {
			continue
		}
		switch s.bind(c).(type) {
		case *int:
			return usagef("--%s or %s must be at least 1, not 0", s.flag, s.env)
		case *time.Duration:
			return usagef("--%s or %s must be more than 0", s.flag, s.env)
		}
	}
	var err error
	if c.MemoryLimit, err = parseMemoryLimit(c.memoryLimit, getenv, machine); err != nil {
		return err
	}
	if err := c.WithDefaults().Validate(); err != nil {
		var bad *setting.Error
		if errors.As(err, &bad) {
			for _, s := range serveSettings {
				if s.field == bad.Field {
					return usagef("--%s or %s %s", s.flag, s.env, bad.Reason)
				}
			}
		}
		return usagef("%v", err)
	}
	return nil
}

// printConfig writes the effective settings, after the flags, the
// environment and the defaults, one SLOTD_NAME=value line each (as an
// environment file takes them), secrets redacted; a zero value is preceded
// by a comment that says what it means.
func (c *serveConfig) printConfig(w io.Writer) {
	eff := *c
	eff.Config = c.WithDefaults()
	for _, s := range serveSettings {
		p := s.bind(&eff)
		v := show(p)
		if s.flag == "memory-limit" {
			v = formatSize(eff.MemoryLimit)
		}
		if s.secret != nil && v != "" {
			v = s.secret(v)
		}
		if s.zero != "" && isZero(p) {
			fmt.Fprintf(w, "# %s: %s\n", s.env, s.zero)
		}
		fmt.Fprintf(w, "%s=%s\n", s.env, v)
	}
}

// formatSize writes a memory limit as --memory-limit takes it.
func formatSize(n int64) string {
	if n <= 0 {
		return "off"
	}
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// redacted stands for a secret in --print-config.
const redacted = "REDACTED"

// dsnPassword is the password of a keyword/value connection string:
// password=secret or password='a secret'.
var dsnPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// redactDatabaseURL shows a connection string without its password: the
// URL's and any password parameter.
func redactDatabaseURL(v string) string {
	if u, err := url.Parse(v); err == nil && u.Scheme != "" {
		if _, set := u.User.Password(); set {
			u.User = url.UserPassword(u.User.Username(), redacted)
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", redacted)
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	if strings.Contains(v, "://") {
		// Not a URL that parses: nothing of it is shown.
		return redacted
	}
	return dsnPassword.ReplaceAllString(v, "${1}"+redacted)
}

// redactKeys shows a key list's names (tenant:, name:) without the keys.
func redactKeys(v string) string {
	items := strings.Split(v, ",")
	for i, item := range items {
		if name, _, ok := strings.Cut(item, ":"); ok {
			items[i] = strings.TrimSpace(name) + ":" + redacted
		} else if strings.TrimSpace(item) != "" {
			items[i] = redacted
		}
	}
	return strings.Join(items, ",")
}
