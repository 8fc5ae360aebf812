package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
	"concord/raters"
	"concord/reports"
)

// The dashboard: server-rendered pages (html/template) over the same stores
// and access rules as the API, with embedded assets and no external
// resources, so that it works offline. Logging in with the admin token or a
// project API key stores that credential in an HttpOnly, SameSite=Lax
// session cookie; every form carries a CSRF token derived from it, and the
// pages' scripts call the API with the cookie (reads) and the CSRF header
// (writes).

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

type dashboard struct {
	s     *Server
	pages map[string]*template.Template
}

func newDashboard(s *Server) (*dashboard, error) {
	d := &dashboard{s: s, pages: map[string]*template.Template{}}
	for _, name := range []string{"login", "projects", "project", "fit", "error", "labels", "next", "jobs", "judge"} {
		t, err := template.New("layout.html").Funcs(templateFuncs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		d.pages[name] = t
	}
	return d, nil
}

func (d *dashboard) routes(r *gin.Engine) {
	static, _ := fs.Sub(staticFS, "static")
	fileServer := http.StripPrefix("/static/", http.FileServer(http.FS(static)))
	r.GET("/static/*file", func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=3600")
		fileServer.ServeHTTP(c.Writer, c.Request)
	})
	r.GET("/favicon.ico", func(c *gin.Context) { c.Redirect(http.StatusMovedPermanently, "/static/favicon.svg") })
	r.GET("/", d.home)
	r.GET("/login", d.loginPage)
	r.POST("/login", d.login)
	r.POST("/logout", d.logout)

	g := r.Group("", d.session)
	g.GET("/projects", d.projectsPage)
	g.POST("/projects", d.createProject)
	g.GET("/projects/:id", d.projectPage)
	g.GET("/projects/:id/labels", d.labelsPage)
	g.POST("/projects/:id/import", d.importFile)
	g.POST("/projects/:id/fits", d.startFit)
	g.POST("/projects/:id/keys", d.createKey)
	g.POST("/projects/:id/keys/:key/delete", d.deleteKey)
	g.POST("/projects/:id/delete", d.deleteProject)
	g.GET("/fits/:id", d.fitPage)
	g.GET("/fits/:id/next", d.nextPage)
	g.GET("/projects/:id/judge", d.judgePage)
	g.POST("/fits/:id/cancel", d.cancelFit)
	g.POST("/fits/:id/delete", d.deleteFit)
	g.GET("/jobs", d.jobsPage)
}

// basePage is what every page shows.
type basePage struct {
	Title    string
	Who      *principal
	CSRF     string
	Flash    string
	Error    string
	Problems []annotations.Problem
	Omitted  int
	Version  string
}

func (d *dashboard) base(c *gin.Context, title string) basePage {
	b := basePage{Title: title, Version: d.s.cfg.Version}
	if v, ok := c.Get(ctxPrincipal); ok {
		b.Who = v.(*principal)
		b.CSRF = d.s.csrfToken(b.Who.token)
	}
	if f, err := c.Cookie(flashCookie); err == nil && f != "" {
		if msg, err := url.QueryUnescape(f); err == nil {
			b.Flash = msg
		}
		d.setCookie(c, flashCookie, "", -1)
	}
	return b
}

// withError puts err on the page: its message and, for rejected files,
// every problem.
func (b *basePage) withError(err error) {
	det := errorDetailOf(err)
	b.Error, b.Problems, b.Omitted = det.Message, det.Problems, det.Omitted
	if len(b.Problems) > 0 {
		if i := strings.IndexByte(b.Error, ':'); i > 0 {
			b.Error = b.Error[:i] // "3 problems"
		}
	}
}

// render writes a page.
func (d *dashboard) render(c *gin.Context, status int, page string, data any) {
	var buf bytes.Buffer
	if err := d.pages[page].Execute(&buf, data); err != nil {
		reqLogger(c, d.s.log).Error("rendering a dashboard page", "page", page, "err", err)
		c.String(http.StatusInternalServerError, "internal error (request %s)", requestID(c))
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	c.Header("X-Frame-Options", "DENY")
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// fail renders an error page for err with its HTTP status.
func (d *dashboard) fail(c *gin.Context, err error) {
	det := errorDetailOf(err)
	status := httpStatus(det.Code)
	if status >= 500 {
		reqLogger(c, d.s.log).Error("dashboard request failed", "err", err)
	}
	b := d.base(c, http.StatusText(status))
	b.withError(err)
	c.Abort()
	d.render(c, status, "error", struct {
		basePage
		Status int
	}{b, status})
}

func (d *dashboard) notFound(c *gin.Context) {
	if p, err := d.s.sessionPrincipal(c); err == nil {
		c.Set(ctxPrincipal, p)
	}
	d.fail(c, annotations.Errorf(annotations.ENOTFOUND, "no page at %s", c.Request.URL.Path))
}

const flashCookie = "concord_flash"

func (d *dashboard) setCookie(c *gin.Context, name, value string, maxAge int) {
	http.SetCookie(c.Writer, &http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: c.Request.TLS != nil, SameSite: http.SameSiteLaxMode,
	})
}

// redirect answers a form post with a redirect and a message for the next
// page.
func (d *dashboard) redirect(c *gin.Context, to, flash string) {
	if flash != "" {
		d.setCookie(c, flashCookie, url.QueryEscape(flash), 60)
	}
	c.Redirect(http.StatusSeeOther, to)
}

// sessionPrincipal resolves the session cookie.
func (s *Server) sessionPrincipal(c *gin.Context) (*principal, error) {
	ck, err := c.Cookie(sessionCookie)
	if err != nil || ck == "" {
		return nil, annotations.Errorf(annotations.EUNAUTHORIZED, "not logged in")
	}
	return s.resolveToken(c, ck)
}

// session requires a logged-in browser (else it goes to the login page)
// and a valid CSRF token on posts.
func (d *dashboard) session(c *gin.Context) {
	p, err := d.s.sessionPrincipal(c)
	if err != nil {
		if annotations.ErrorCode(err) != annotations.EUNAUTHORIZED {
			d.fail(c, err)
			return
		}
		c.Abort()
		c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request.URL.RequestURI()))
		return
	}
	c.Set(ctxPrincipal, p)
	if c.Request.Method == http.MethodPost {
		got := c.Request.Header.Get(csrfHeader)
		if got == "" {
			v, err := d.formValue(c, csrfField)
			if err != nil {
				d.fail(c, err)
				return
			}
			got = v
		}
		if !hmac.Equal([]byte(got), []byte(d.s.csrfToken(p.token))) {
			d.fail(c, annotations.Errorf(annotations.EFORBIDDEN, "the form has expired or did not come from this dashboard; reload the page and try again"))
			return
		}
	}
	c.Next()
}

// formValue reads a form field of a urlencoded or multipart post, within
// the upload limit.
func (d *dashboard) formValue(c *gin.Context, name string) (string, error) {
	if strings.HasPrefix(c.GetHeader("Content-Type"), "multipart/") {
		form, err := d.s.multipartForm(c)
		if err != nil {
			return "", err
		}
		if vs := form.Value[name]; len(vs) > 0 {
			return vs[0], nil
		}
		return "", nil
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, d.s.cfg.MaxJSONBytes)
	return c.PostForm(name), nil
}

func (d *dashboard) home(c *gin.Context) {
	if _, err := d.s.sessionPrincipal(c); err == nil {
		c.Redirect(http.StatusSeeOther, "/projects")
		return
	}
	c.Redirect(http.StatusSeeOther, "/login")
}

// safeNext keeps post-login redirects on this site: a path that starts
// with one "/" and holds no control character, space or backslash
// (browsers drop tabs and newlines from a URL and read "\\" as "/", so
// "/<TAB>/host" or "/\\host" would go off-site), parsed without a scheme
// or host.
func safeNext(next string) string {
	const home = "/projects"
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return home
	}
	for _, r := range next {
		if r < 0x21 || r == 0x7f || r == '\\' || (r >= 0x80 && r <= 0x9f) {
			return home
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return home
	}
	return next
}

// loginCSRFCookie holds the login form's token (double-submit: the form
// carries the same value; a cross-site post carries neither the SameSite
// cookie nor the value), so that another site cannot log a visitor in with
// its own key.
const loginCSRFCookie = "concord_login_csrf"

type loginPage struct {
	basePage
	Next string
	// CSRF is the login form's token.
	CSRF string
}

// loginToken sets a fresh login-form token cookie and returns its value.
func (d *dashboard) loginToken(c *gin.Context) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("server: no randomness for the login token: " + err.Error())
	}
	v := hex.EncodeToString(b[:])
	http.SetCookie(c.Writer, &http.Cookie{
		Name: loginCSRFCookie, Value: v, Path: "/login", MaxAge: 3600,
		HttpOnly: true, Secure: c.Request.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
	return v
}

func (d *dashboard) loginPage(c *gin.Context) {
	if code := c.Query("code"); code != "" {
		if !d.s.logins.redeem(code) {
			b := d.base(c, "Log in")
			b.Error = "This login link has been used or has expired: log in with the admin token or a project API key."
			d.render(c, http.StatusUnauthorized, "login", loginPage{b, "/projects", d.loginToken(c)})
			return
		}
		d.setCookie(c, sessionCookie, d.s.cfg.AdminToken, 12*3600)
		c.Redirect(http.StatusSeeOther, "/projects")
		return
	}
	d.render(c, http.StatusOK, "login", loginPage{d.base(c, "Log in"), safeNext(c.Query("next")), d.loginToken(c)})
}

func (d *dashboard) login(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, 64<<10)
	token := strings.TrimSpace(c.PostForm("token"))
	next := safeNext(c.PostForm("next"))
	if ck, err := c.Cookie(loginCSRFCookie); err != nil || ck == "" || !hmac.Equal([]byte(ck), []byte(c.PostForm(csrfField))) {
		b := d.base(c, "Log in")
		b.Error = "The login form has expired or did not come from this dashboard: log in again here."
		d.render(c, http.StatusForbidden, "login", loginPage{b, next, d.loginToken(c)})
		return
	}
	p, err := d.s.resolveToken(c, token)
	if err != nil {
		b := d.base(c, "Log in")
		b.Error = "That is neither the admin token nor a valid project API key."
		if annotations.ErrorCode(err) != annotations.EUNAUTHORIZED {
			b.withError(err)
		}
		d.render(c, http.StatusUnauthorized, "login", loginPage{b, next, d.loginToken(c)})
		return
	}
	// The token is single-use: clear it.
	http.SetCookie(c.Writer, &http.Cookie{Name: loginCSRFCookie, Value: "", Path: "/login", MaxAge: -1,
		HttpOnly: true, Secure: c.Request.TLS != nil, SameSite: http.SameSiteStrictMode})
	d.setCookie(c, sessionCookie, token, 12*3600)
	if !p.Admin && next == "/projects" {
		next = "/projects/" + itoa(p.ProjectID)
	}
	c.Redirect(http.StatusSeeOther, next)
}

func (d *dashboard) logout(c *gin.Context) {
	// Logging out needs no CSRF check: the worst a forged post can do is
	// log the user out.
	d.setCookie(c, sessionCookie, "", -1)
	c.Redirect(http.StatusSeeOther, "/login")
}

type projectsPage struct {
	basePage
	Projects []projectJSON
	NewKey   string
}

func (d *dashboard) projectsPage(c *gin.Context) {
	ps, err := d.s.store.ListProjects(c.Request.Context())
	if err != nil {
		d.fail(c, err)
		return
	}
	p := who(c)
	out := projectsPage{basePage: d.base(c, "Projects")}
	for i := range ps {
		if p.canSee(ps[i].ID) {
			pj := newProjectJSON(&ps[i].Project)
			pj.Items, pj.Raters, pj.Labels = ps[i].Items, ps[i].Raters, ps[i].Labels
			out.Projects = append(out.Projects, pj)
		}
	}
	d.render(c, http.StatusOK, "projects", out)
}

func (d *dashboard) createProject(c *gin.Context) {
	if err := requireAdmin(c, "creating a project"); err != nil {
		d.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	p := &annotations.Project{Name: strings.TrimSpace(c.PostForm("name"))}
	scheme, err := annotations.ParseScheme(c.PostForm("scheme"))
	if err == nil {
		p.Scheme = scheme
		err = d.s.store.CreateProject(ctx, p)
	}
	if err != nil {
		ps, _ := d.s.store.ListProjects(ctx)
		out := projectsPage{basePage: d.base(c, "Projects")}
		out.withError(err)
		for i := range ps {
			pj := newProjectJSON(&ps[i].Project)
			pj.Items, pj.Raters, pj.Labels = ps[i].Items, ps[i].Raters, ps[i].Labels
			out.Projects = append(out.Projects, pj)
		}
		d.render(c, httpStatus(annotations.ErrorCode(err)), "projects", out)
		return
	}
	key, _, err := d.s.makeKey(ctx, p.ID, "default", false)
	if err != nil {
		d.fail(c, err)
		return
	}
	d.renderProject(c, p, http.StatusCreated, func(pp *projectPage) {
		pp.NewKey = key
		pp.Flash = "Project " + p.Name + " created."
	})
}

// projectPage is a project's page.
type projectPage struct {
	basePage
	Project projectJSON
	Levels  []levelCount
	Raters  []raterCount
	Fits    []annotations.Fit
	Keys    []annotations.APIKey
	NewKey  string
	Form    map[string]string
	Active  bool // a fit is queued or running
	// The start-fit form: the models that fit the scheme (none: no form),
	// their engines and settings, the kernels that suit the items.
	Fittable bool
	FitForm  fitFormView
	// Hints are the placeholders of the form's prior and convergence
	// fields: the model's defaults (analysis's model table).
	Hints map[string]string
	// HiddenModels are the models of the scheme the project cannot run,
	// each with the reason.
	HiddenModels []string
	// Below is the low-agreement filter of the per-item agreement table
	// (?below=X), passed on to the API, which checks it.
	Below string
	// Ties is the tie rule of the agreement section's majority vote and
	// Wawa (?ties=first|frequent, raters.TieRule's names), passed on to
	// the agreement API; "" for the default (frequent).
	Ties string
	// CI, Null and Weights are the agreement section's interval kind
	// (?ci=t|normal), second test value (?null=) and weightings
	// (?weights=), passed on to the agreement API when valid ("" for the
	// defaults); AgreementQuery is the API query of all four.
	CI, Null, Weights string
	AgreementQuery    string
	// AgreementOpts are the agreement section's other options, the rest
	// of the agreement API's query parameters (population, bootstrap,
	// seed, random_start, pairs, min_shared, Dawid-Skene's ds_iter, ds_tol, ds_gold,
	// ds_init and ds_init_strategy, custom weights weights_matrix), by
	// name, each kept only when the API's parser accepts it.
	AgreementOpts map[string]string
	// DefaultBootstrap is the bootstrap field's placeholder
	// (analysis.DefaultBootstrap).
	DefaultBootstrap int
	// WeightChoices are the weightings the page offers one by one.
	WeightChoices []string
}

type levelCount struct {
	Code, Name string
	N          int
	Pct        float64
}

type raterCount struct {
	ID string
	N  int
}

func (d *dashboard) projectParam(c *gin.Context, a access) (*annotations.Project, bool) {
	return orFail(d.fail, c, a, d.s.projectParam)
}

func (d *dashboard) projectPage(c *gin.Context) {
	p, ok := d.projectParam(c, read)
	if !ok {
		return
	}
	d.renderProject(c, p, http.StatusOK, func(pg *projectPage) {
		pg.Below, pg.Ties = belowParam(c), tiesParam(c)
		agreementParamsOf(c, pg)
	})
}

// agreementParamsOf reads the project page's agreement options (?ci=,
// ?null=, ?weights= and the others of agreementPageParams) into pg, each kept only when the agreement API
// accepts it (the page's fields offer only valid ones), and builds the
// API query with the tie rule.
func agreementParamsOf(c *gin.Context, pg *projectPage) {
	q := url.Values{}
	if pg.Ties != "" {
		q.Set("ties", pg.Ties)
	}
	if v := strings.TrimSpace(c.Query("ci")); v != "" {
		if _, err := analysis.ParseCI(v); err == nil {
			pg.CI = v
			q.Set("ci", v)
		}
	}
	if v := strings.TrimSpace(c.Query("null")); v != "" {
		if x, err := analysis.ParseNull(v); err == nil && x != 0 {
			pg.Null = v
			q.Set("null", v)
		}
	}
	if v := strings.TrimSpace(c.Query("weights")); v != "" {
		if _, err := analysis.ParseWeightsList(v); err == nil {
			pg.Weights = v
			q.Set("weights", v)
		}
	}
	pg.AgreementOpts = map[string]string{}
	for _, name := range agreementPageParams() {
		if v := strings.TrimSpace(c.Query(name)); v != "" && agreementParamOK(name, v) {
			pg.AgreementOpts[name] = v
			q.Set(name, v)
		}
	}
	pg.AgreementQuery = q.Encode()
	for _, w := range []raters.Weights{raters.LinearWeights, raters.QuadraticWeights, raters.OrdinalWeights, raters.RatioWeights,
		raters.RadicalWeights, raters.CircularWeights, raters.BipolarWeights} {
		pg.WeightChoices = append(pg.WeightChoices, w.String())
	}
}

// tiesParam is the project page's tie rule (?ties=): a name
// raters.ParseTieRule knows, or "" (the default rule; an unknown name is
// ignored, as the page's select offers only the known ones).
func tiesParam(c *gin.Context) string {
	t := strings.TrimSpace(c.Query("ties"))
	if _, err := raters.ParseTieRule(t); err != nil {
		return ""
	}
	return t
}

// renderProject renders a project's page; edit adjusts it (messages, form
// values) before rendering.
func (d *dashboard) renderProject(c *gin.Context, p *annotations.Project, status int, edit func(*projectPage)) {
	ctx := c.Request.Context()
	pj, err := d.s.projectDetail(ctx, p)
	if err != nil {
		d.fail(c, err)
		return
	}
	models := fittingModels(p.Scheme, pj.Stats.ItemsWithText)
	// Models the project's items cannot feed are not offered, with the
	// reason.
	var hidden []string
	kept := models[:0:0]
	for _, m := range models {
		if m.Name == analysis.ModelAUC && pj.Stats.ItemsWithCovariates == 0 {
			hidden = append(hidden, "auc (its scores read the items' numeric covariates, and no item has any: import an items file with numeric columns)")
			continue
		}
		kept = append(kept, m)
	}
	models = kept
	page := projectPage{basePage: d.base(c, p.Name), Project: pj, Fittable: len(models) > 0, Form: map[string]string{}, HiddenModels: hidden,
		DefaultBootstrap: analysis.DefaultBootstrap}
	if page.Fittable {
		model := models[0]
		// The settings are empty (their defaults, shown as placeholders;
		// the selects show their defaults).
		page.Form = map[string]string{modelKey(): model.Name, "seed": itoa(defaultSeed), kernelKey(): "", engineKey(): model.DefaultEngine()}
		page.Hints = settingHints(model.Name)
	}
	st := pj.Stats
	if p.Scheme.Categorical() {
		for _, l := range p.Scheme.Levels {
			n := st.Distribution[l.Code]
			page.Levels = append(page.Levels, levelCount{l.Code, l.Name, n, 100 * float64(n) / float64(max(st.Labels, 1))})
		}
	} else {
		for v, n := range st.Distribution {
			page.Levels = append(page.Levels, levelCount{Code: v, N: n, Pct: 100 * float64(n) / float64(max(st.Labels, 1))})
		}
		sort.Slice(page.Levels, func(i, j int) bool { return annotations.CompareIDs(page.Levels[i].Code, page.Levels[j].Code) < 0 })
		if len(page.Levels) > 50 {
			page.Levels = page.Levels[:50]
		}
	}
	for id, n := range st.PerRater {
		page.Raters = append(page.Raters, raterCount{id, n})
	}
	sort.Slice(page.Raters, func(i, j int) bool {
		if page.Raters[i].N != page.Raters[j].N {
			return page.Raters[i].N > page.Raters[j].N
		}
		return page.Raters[i].ID < page.Raters[j].ID
	})
	if page.Fits, err = d.s.store.ListFits(ctx, p.ID); err != nil {
		d.fail(c, err)
		return
	}
	for _, f := range page.Fits {
		if !f.Status.Terminal() {
			page.Active = true
		}
	}
	if who(c).Admin {
		if page.Keys, err = d.s.store.ListAPIKeys(ctx, p.ID); err != nil {
			d.fail(c, err)
			return
		}
	}
	if edit != nil {
		edit(&page)
	}
	if page.Fittable {
		in, err := d.itemInputs(ctx, p.ID)
		if err != nil {
			d.fail(c, err)
			return
		}
		withText := pj.Stats.ItemsWithText
		if in.text {
			withText = max(withText, 1)
		}
		page.FitForm = newFitFormView(models, page.Form, withText, pj.Stats.Items-pj.Stats.LabelledItems, in)
	}
	d.render(c, status, "project", page)
}

func (d *dashboard) importFile(c *gin.Context) {
	p, ok := d.projectParam(c, write)
	if !ok {
		return
	}
	form, err := d.s.multipartForm(c)
	var res *importResponse
	if err == nil {
		res, err = d.s.importForm(c, p, form)
	}
	if err != nil {
		d.renderProject(c, p, httpStatus(annotations.ErrorCode(err)), func(pp *projectPage) {
			pp.withError(err)
			pp.Error = "Import rejected, nothing was written: " + formHints(pp.Error)
			for i := range pp.Problems {
				pp.Problems[i].Msg = formHints(pp.Problems[i].Msg)
			}
		})
		return
	}
	d.redirect(c, "/projects/"+itoa(p.ID), importSummary(res))
}

// importFields are the import form's names of the settings that messages
// name by their command-line flag and API field.
var importFields = map[string]string{"item_col": "Item column", "rater_col": "Rater column", "label_col": "Label column", "rater": "rater",
	"prob_col": "Probability column", "model_raters": "Model raters"}

// flagHintRE matches how the import's messages name a setting:
// `--label-col NAME ("label_col" in the API)`.
var flagHintRE = regexp.MustCompile(`--[a-z-]+ (\S+) \("([a-z_]+)" in the API\)`)

// formHints rewrites an import message's flag hints for the dashboard:
// the form's field, with the value to give it.
func formHints(msg string) string {
	return flagHintRE.ReplaceAllStringFunc(msg, func(m string) string {
		sub := flagHintRE.FindStringSubmatch(m)
		field, ok := importFields[sub[2]]
		if !ok {
			return m
		}
		if sub[1] == "NAME" {
			return fmt.Sprintf("the form's %q field", field)
		}
		return fmt.Sprintf("the form's %q field (%s)", field, sub[1])
	})
}

func importSummary(r *importResponse) string {
	var b strings.Builder
	b.WriteString("Imported " + r.File + " (" + r.Format + "): ")
	b.WriteString(itoa(int64(r.LabelsAdded)) + " labels added, ")
	if r.LabelsReplaced > 0 {
		b.WriteString(itoa(int64(r.LabelsReplaced)) + " replaced, ")
	}
	b.WriteString(itoa(int64(r.LabelsUnchanged)) + " unchanged; ")
	b.WriteString(itoa(int64(r.ItemsAdded)) + " new items, " + itoa(int64(r.RatersAdded)) + " new raters.")
	if r.DuplicatesDropped > 0 {
		b.WriteString(" " + itoa(int64(r.DuplicatesDropped)) + " repeated labels dropped (the first of each rater for each item kept).")
	}
	if r.ModelsMarked > 0 {
		b.WriteString(" " + itoa(int64(r.ModelsMarked)) + " stored raters marked as models.")
	}
	if len(r.Unused) > 0 {
		b.WriteString(" Unused columns: " + strings.Join(r.Unused, ", ") + ".")
	}
	return b.String()
}

func (d *dashboard) startFit(c *gin.Context) {
	p, ok := d.projectParam(c, write)
	if !ok {
		return
	}
	req, form, err := fitForm(c, p.Scheme)
	var f *annotations.Fit
	if err == nil {
		f, err = d.s.startFit(c.Request.Context(), p, req)
	}
	if err != nil {
		d.renderProject(c, p, httpStatus(annotations.ErrorCode(err)), func(pp *projectPage) {
			pp.withError(err)
			pp.Error = "The fit was not started: " + pp.Error
			for k, v := range form {
				pp.Form[k] = v
			}
		})
		return
	}
	d.redirect(c, "/fits/"+itoa(f.ID), "")
}

func (d *dashboard) createKey(c *gin.Context) {
	p, ok := d.projectParam(c, admin)
	if !ok {
		return
	}
	name := strings.TrimSpace(c.PostForm("name"))
	readOnly := c.PostForm("read_only") != ""
	var key string
	var err error = annotations.Errorf(annotations.EINVALID, "the key needs a name")
	if name != "" {
		key, _, err = d.s.makeKey(c.Request.Context(), p.ID, name, readOnly)
	}
	status := http.StatusCreated
	if err != nil {
		status = httpStatus(annotations.ErrorCode(err))
	}
	d.renderProject(c, p, status, func(pp *projectPage) {
		if err != nil {
			pp.withError(err)
			return
		}
		pp.NewKey = key
		pp.Flash = "API key " + name + " created."
	})
}

func (d *dashboard) deleteKey(c *gin.Context) {
	p, ok := d.projectParam(c, admin)
	if !ok {
		return
	}
	kid, err := idParam(c, "key", "API key")
	if err == nil {
		err = d.s.store.DeleteAPIKey(c.Request.Context(), p.ID, kid)
	}
	if err != nil {
		d.fail(c, err)
		return
	}
	d.s.keys.forget()
	d.redirect(c, "/projects/"+itoa(p.ID), "API key revoked.")
}

func (d *dashboard) deleteProject(c *gin.Context) {
	p, ok := d.projectParam(c, admin)
	if !ok {
		return
	}
	if c.PostForm("confirm") != p.Name {
		d.renderProject(c, p, http.StatusBadRequest, func(pp *projectPage) {
			pp.Error = "To delete the project, type its name " + p.Name + " in the box."
		})
		return
	}
	d.s.pool.stopProject(p.ID)
	if err := d.s.store.DeleteProject(c.Request.Context(), p.ID); err != nil {
		d.fail(c, err)
		return
	}
	d.s.keys.forget()
	d.s.cache.forgetProject(p.ID)
	d.redirect(c, "/projects", "Project "+p.Name+" deleted.")
}

// fitPage is a fit's page. A done fit's page renders from its report
// (reports.Report, built once per cached fit) and nothing else: the views
// below are the report's sections, cut to the page's rows.
type fitPage struct {
	basePage
	Project *annotations.Project
	Fit     fitJSON
	Spec    map[string]any
	// Report is the done fit's report; nil when it cannot be made
	// (ReportError says why).
	Report *reports.Report
	// Judge is the judge report of the fit's model raters (nil without
	// them); JudgeProblem why there is none when they exist.
	Judge        *analysis.JudgeReportDoc
	JudgeProblem string
	// LSFrom and LSTo prefill the Label Studio names form (a CSV or
	// JSON-MIN import's annotation column and a guess of the object);
	// LSKnown when a Label Studio JSON import kept both (the download
	// needs no form).
	LSFrom, LSTo string
	LSKnown      bool
	Ranking      []rankRow
	Truncated    int
	// Raters are the report's raters by decreasing precision.
	Raters []raterRow
	Flags  []reports.Flag
	Chart  template.HTML
	Thresh template.HTML
	Tables []string
	// MainPlots are shown at full width, MorePlots on demand.
	MainPlots []plotView
	MorePlots []plotView
	Done      bool
	// MeanEntropy is the mean entropy, in bits, of the items' consensus
	// class distributions (classification).
	MeanEntropy *float64
	// Classification fits: the consensus class table, the class
	// distribution, the raters' confusion tables against the consensus.
	Classification  bool
	FixedPrecisions bool
	// Values: a fit of bounded ratings (consensus values on the rating
	// scale, rater dispersions); Bias when the raters' biases were fitted.
	Values         bool
	Bias           bool
	Consensus      []classRow
	ClassDist      []classDist
	Confusions     []confusionView
	ConfusionsLeft int
	Levels         []string
	// Robust fits: the labels most probably wrong (the first
	// maxLabelErrorRows by p_error), how many labels there are in all, and
	// whether the raters have error rates.
	LabelErrors      []labelErrorRow
	LabelErrorsTotal int
	ErrorRates       bool
	// ConfusionModel: the raters have confusion matrices of the model
	// (the confusion model): the raters table shows their accuracy and
	// spam score instead of a precision.
	ConfusionModel bool
	// The headline numbers beside the model's, and the review queue (the
	// first maxReviewRows of ReviewTotal labels).
	Headline    *headline
	Review      []reviewRow
	ReviewTotal int
	ReportError string
	// AUC is the view of an AUC scoring fit (nil for other models): the
	// items by score, the coefficients, gamma's cross-validation.
	AUC *aucView
	// Gold is each rater's record on the gold questions (empty without
	// gold), GoldItems the number of gold items, GoldLeft the raters past
	// maxGoldRows.
	Gold      []goldRow
	GoldItems int
	GoldLeft  int
	// ModelChoice is how the fit chose its model among candidates by the
	// evidence (the crowd consensus's rater models, the bounded model's
	// likelihoods, dispersions and kernels); nil when it made no choice.
	ModelChoice *reports.ModelChoice
}

// goldRow is a rater's row of the fit page's gold table.
type goldRow struct {
	Rater                  string
	Items, Labels, Correct int
	Accuracy, Q025, Q975   float64
}

// maxGoldRows bounds the fit page's gold table.
const maxGoldRows = 500

// goldRows returns the raters' records on the gold questions, those surely
// least accurate first (by the Wilson interval's upper end, then the
// accuracy; no gold seen last), at most maxGoldRows, and the number of gold
// items.
func goldRows(rep *reports.Report) (rows []goldRow, nGold, left int) {
	for _, it := range rep.Items {
		if it.Gold != "" {
			nGold++
		}
	}
	for _, r := range rep.Raters {
		if g := r.Gold; g != nil {
			rows = append(rows, goldRow{Rater: r.ID, Items: g.Items, Labels: g.Labels, Correct: g.Correct,
				Accuracy: float64(g.Accuracy), Q025: float64(g.Q025), Q975: float64(g.Q975)})
		}
	}
	key := func(g goldRow) (float64, float64) {
		if g.Labels == 0 {
			return 2, 2
		}
		return g.Q975, g.Accuracy
	}
	sort.SliceStable(rows, func(i, j int) bool {
		hi, a := key(rows[i])
		hj, b := key(rows[j])
		return hi < hj || hi == hj && a < b
	})
	if len(rows) > maxGoldRows {
		rows, left = rows[:maxGoldRows], len(rows)-maxGoldRows
	}
	return rows, nGold, left
}

func (d *dashboard) fitParam(c *gin.Context, a access) (*annotations.Fit, bool) {
	return orFail(d.fail, c, a, d.s.fitParam)
}

// fitAndProject resolves the fit of :id with access a and reads its
// project; on failure it renders the error and returns false.
func (d *dashboard) fitAndProject(c *gin.Context, a access) (*annotations.Fit, *annotations.Project, bool) {
	f, ok := d.fitParam(c, a)
	if !ok {
		return nil, nil, false
	}
	p, err := d.s.store.FindProjectByID(c.Request.Context(), f.ProjectID)
	if err != nil {
		d.fail(c, err)
		return nil, nil, false
	}
	return f, p, true
}

func (d *dashboard) fitPage(c *gin.Context) {
	f, p, ok := d.fitAndProject(c, read)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	page := fitPage{basePage: d.base(c, p.Name+": fit "+itoa(f.ID)), Project: p, Fit: d.s.fitView(ctx, f),
		Done: f.Status == annotations.FitDone}
	_ = jsonUnmarshal(f.Spec, &page.Spec)
	if page.Done {
		cf, err := d.s.result(ctx, f)
		if err != nil {
			d.fail(c, err)
			return
		}
		// The report (shared with the downloads, made once per fit).
		rep, err := d.s.report(ctx, reportInput{Project: cf.project, Fit: f, Result: cf.res, Raw: cf.raw}, cf)
		if err != nil {
			page.ReportError = annotations.ErrorMessage(err)
		} else {
			page.fill(rep)
		}
		page.Judge, page.JudgeProblem = fitJudge(cf.res)
		page.LSFrom, page.LSTo, page.LSKnown = d.s.labelStudioNames(ctx, p.ID)
	}
	d.render(c, http.StatusOK, "fit", page)
}

func (d *dashboard) cancelFit(c *gin.Context) {
	f, ok := d.fitParam(c, write)
	if !ok {
		return
	}
	if f.Status.Terminal() {
		d.redirect(c, "/fits/"+itoa(f.ID), "The fit has already ended ("+string(f.Status)+").")
		return
	}
	if _, err := d.s.store.RequestCancel(c.Request.Context(), f.ID); err != nil {
		d.fail(c, err)
		return
	}
	d.s.pool.cancelLocal(f.ID)
	d.redirect(c, "/fits/"+itoa(f.ID), "Cancel requested.")
}

func (d *dashboard) deleteFit(c *gin.Context) {
	f, ok := d.fitParam(c, write)
	if !ok {
		return
	}
	if f.Status == annotations.FitRunning {
		d.fail(c, annotations.Errorf(annotations.ECONFLICT, "fit %d is running; cancel it before deleting it", f.ID))
		return
	}
	if err := d.s.store.DeleteFit(c.Request.Context(), f.ID); err != nil {
		d.fail(c, err)
		return
	}
	d.s.cache.forget(f.ID)
	d.redirect(c, "/projects/"+itoa(f.ProjectID), "Fit "+itoa(f.ID)+" deleted.")
}
