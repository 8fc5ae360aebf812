package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"concord/annotations"
)

// Access control.
//
// Two kinds of credentials are accepted, both as "Authorization: Bearer
// TOKEN" (or, for the dashboard, in the session cookie):
//
//   - the admin token (Config.AdminToken), which may do everything: create
//     and delete projects, manage API keys, and read and write every project;
//   - a project API key "ck_PREFIX_SECRET", which sees only its own project.
//     Every other project's ids, and the fits of other projects, answer 404
//     exactly as ids that do not exist, so a key learns nothing about other
//     projects. A read-only key cannot change anything (403).
//
// Keys are 256-bit random secrets. The store keeps only their public prefix
// (to find the key) and the SHA-256 of the whole key, compared in constant
// time; a slow password hash adds nothing for secrets of that strength.

// keyPrefixLen is the length of the public key prefix (6 random bytes in
// base32).
const keyPrefixLen = 10

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// newAPIKey returns a fresh key, its public prefix and its hash.
func newAPIKey() (key, prefix string, hash []byte) {
	var p [6]byte
	var sec [32]byte
	rand.Read(p[:])
	rand.Read(sec[:])
	prefix = strings.ToLower(b32.EncodeToString(p[:]))
	key = "ck_" + prefix + "_" + base64.RawURLEncoding.EncodeToString(sec[:])
	return key, prefix, hashToken(key)
}

func hashToken(t string) []byte {
	h := sha256.Sum256([]byte(t))
	return h[:]
}

// keyPrefix returns the prefix of a well-formed project key.
func keyPrefix(t string) (string, bool) {
	rest, ok := strings.CutPrefix(t, "ck_")
	if !ok || len(rest) != keyPrefixLen+1+43 || rest[keyPrefixLen] != '_' {
		return "", false
	}
	return rest[:keyPrefixLen], true
}

// principal is who a request acts for.
type principal struct {
	Admin     bool
	ProjectID int64
	ReadOnly  bool
	KeyID     int64
	KeyName   string
	// token is the credential itself (for the dashboard's CSRF token).
	token string
}

// canSee reports whether the principal may see the project.
func (p *principal) canSee(projectID int64) bool {
	return p.Admin || p.ProjectID == projectID
}

// role describes the principal for responses and logs.
func (p *principal) Role() string {
	switch {
	case p.Admin:
		return "admin"
	case p.ReadOnly:
		return "read-only key"
	}
	return "read-write key"
}

const (
	ctxPrincipal  = "concord.principal"
	sessionCookie = "concord_session"
	csrfHeader    = "X-CSRF-Token"
	csrfField     = "csrf"
)

// resolveToken returns the principal of a token, or EUNAUTHORIZED.
func (s *Server) resolveToken(c *gin.Context, token string) (*principal, error) {
	if token == "" {
		return nil, annotations.Errorf(annotations.EUNAUTHORIZED, "empty token")
	}
	h := hashToken(token)
	if subtle.ConstantTimeCompare(h, s.adminHash) == 1 {
		return &principal{Admin: true, token: token}, nil
	}
	prefix, ok := keyPrefix(token)
	if !ok {
		return nil, annotations.Errorf(annotations.EUNAUTHORIZED, "invalid token: neither the admin token nor a project API key")
	}
	keys, err := s.keys.find(c, prefix)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if subtle.ConstantTimeCompare(h, k.Hash) == 1 {
			return &principal{ProjectID: k.ProjectID, ReadOnly: k.ReadOnly, KeyID: k.ID, KeyName: k.Name, token: token}, nil
		}
	}
	return nil, annotations.Errorf(annotations.EUNAUTHORIZED, "invalid token: unknown or revoked API key")
}

// authenticate is the API's authentication middleware. A request with a
// session cookie and no Authorization header must carry the CSRF token
// (header X-CSRF-Token) when it changes anything.
func (s *Server) authenticate(c *gin.Context) {
	p, err := s.credentials(c)
	if err != nil {
		c.Header("WWW-Authenticate", `Bearer realm="concord"`)
		s.fail(c, err)
		return
	}
	c.Set(ctxPrincipal, p)
	c.Next()
}

func (s *Server) credentials(c *gin.Context) (*principal, error) {
	if h := c.GetHeader("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return nil, annotations.Errorf(annotations.EUNAUTHORIZED, "Authorization header: expected \"Bearer <token>\" with the admin token or a project API key")
		}
		return s.resolveToken(c, strings.TrimSpace(token))
	}
	if ck, err := c.Cookie(sessionCookie); err == nil && ck != "" {
		p, err := s.resolveToken(c, ck)
		if err != nil {
			return nil, err
		}
		if !safeMethod(c.Request.Method) && !hmac.Equal([]byte(c.GetHeader(csrfHeader)), []byte(s.csrfToken(p.token))) {
			return nil, annotations.Errorf(annotations.EFORBIDDEN, "missing or wrong %s header for a cookie session", csrfHeader)
		}
		return p, nil
	}
	return nil, annotations.Errorf(annotations.EUNAUTHORIZED, "missing credentials: send \"Authorization: Bearer <token>\" with the admin token or a project API key")
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// csrfToken derives the dashboard's CSRF token of a session from its
// credential: an HMAC under a key derived from the admin token, so that it
// is stable across restarts and across processes with the same
// configuration.
func (s *Server) csrfToken(token string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil))
}

// who returns the request's principal (set by authenticate).
func who(c *gin.Context) *principal {
	v, _ := c.Get(ctxPrincipal)
	p, _ := v.(*principal)
	if p == nil {
		panic("server: handler without authentication")
	}
	return p
}

// requireAdmin answers EFORBIDDEN unless the caller holds the admin token.
func requireAdmin(c *gin.Context, what string) error {
	if !who(c).Admin {
		return annotations.Errorf(annotations.EFORBIDDEN, "%s needs the admin token", what)
	}
	return nil
}

// access is what a handler wants to do with a project.
type access int

const (
	read access = iota
	write
	admin
)

// checkProject enforces the access rules for project id: invisible projects
// are ENOTFOUND (with the store's message for a missing project), writes
// with a read-only key EFORBIDDEN, admin actions without the admin token
// EFORBIDDEN.
func checkProject(c *gin.Context, id int64, a access) error {
	p := who(c)
	if !p.canSee(id) {
		return annotations.Errorf(annotations.ENOTFOUND, "project %d not found", id)
	}
	switch {
	case a == admin && !p.Admin:
		return annotations.Errorf(annotations.EFORBIDDEN, "this needs the admin token; a project API key cannot do it")
	case a == write && p.ReadOnly:
		return annotations.Errorf(annotations.EFORBIDDEN, "API key %q is read-only", p.KeyName)
	}
	c.Set(ctxProject, id)
	return nil
}

// keyCache remembers the keys of a prefix for a short time, so that a burst
// of requests with one key costs one lookup. Deleting a key clears the
// cache of this process at once; other processes sharing the database see
// the deletion within the TTL.
type keyCache struct {
	s   *Server
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]keyEntry
}

type keyEntry struct {
	keys []annotations.APIKey
	at   time.Time
}

func (k *keyCache) find(c *gin.Context, prefix string) ([]annotations.APIKey, error) {
	now := time.Now()
	if k.ttl > 0 {
		k.mu.Lock()
		e, ok := k.m[prefix]
		k.mu.Unlock()
		if ok && now.Sub(e.at) < k.ttl {
			return e.keys, nil
		}
	}
	keys, err := k.s.store.FindAPIKeyByPrefix(c.Request.Context(), prefix)
	if err != nil {
		return nil, err
	}
	if k.ttl > 0 {
		k.mu.Lock()
		if len(k.m) > 10000 {
			clear(k.m)
		}
		k.m[prefix] = keyEntry{keys, now}
		k.mu.Unlock()
	}
	return keys, nil
}

func (k *keyCache) forget() {
	k.mu.Lock()
	clear(k.m)
	k.mu.Unlock()
}

// loginCodes are single-use codes that log a browser in as admin
// (Server.LoginURL), so that `concord demo` can print a link that opens the
// dashboard directly.
type loginCodes struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (l *loginCodes) issue(ttl time.Duration) string {
	var b [24]byte
	rand.Read(b[:])
	code := base64.RawURLEncoding.EncodeToString(b[:])
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for k, exp := range l.m {
		if now.After(exp) {
			delete(l.m, k)
		}
	}
	l.m[code] = now.Add(ttl)
	return code
}

// redeem reports whether code is a live code, and spends it.
func (l *loginCodes) redeem(code string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	exp, ok := l.m[code]
	if !ok {
		return false
	}
	delete(l.m, code)
	return time.Now().Before(exp)
}

// RandomToken returns a fresh admin token for `concord serve` when none is
// configured.
func RandomToken() string {
	var b [32]byte
	rand.Read(b[:])
	return "cadm_" + base64.RawURLEncoding.EncodeToString(b[:])
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
