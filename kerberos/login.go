package kerberos

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Logins is the process's set of logins: one per principal and keytab. It
// is safe for concurrent use.
type Logins struct {
	log *slog.Logger
	now func() time.Time

	mu     sync.Mutex
	logins map[string]*Login
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// NewLogins returns an empty set; renewals are logged to log.
func NewLogins(log *slog.Logger) *Logins {
	ctx, stop := context.WithCancel(context.Background())
	return &Logins{log: log.With("component", "kerberos"), now: time.Now, logins: map[string]*Login{}, ctx: ctx, stop: stop}
}

// Close stops every renewal. The gokrb5 clients are left as they are, not
// destroyed: a client still shutting down may be using one (Destroy writes
// the credentials it reads), and their own timers end with the process.
func (ls *Logins) Close() {
	ls.stop()
	ls.wg.Wait()
}

// Login returns the login of cfg's principal and keytab, logging in on
// first use. A failed first login is not kept: the next call tries again
// (the KDC may have been unreachable). Later calls with another
// RenewPeriod share the login and its first period.
func (ls *Logins) Login(cfg Config) (*Login, error) {
	p, err := Prepare(cfg)
	if err != nil {
		return nil, err
	}
	key := p.Principal + "\x00" + p.cfg.Keytab
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l, ok := ls.logins[key]; ok {
		return l, nil
	}
	l := &Login{Prepared: p, log: ls.log.With("principal", p.Principal), now: ls.now}
	if err := l.login(); err != nil {
		return nil, err
	}
	ls.logins[key] = l
	for _, w := range p.Warnings {
		l.log.Warn(w)
	}
	l.log.Info("kerberos login from keytab", "keytab", p.cfg.Keytab, "krb5_conf", p.Krb5Conf,
		"expires", l.Expires().UTC().Format(time.RFC3339), "renewal_in", l.nextCheck().Round(time.Second))
	ls.wg.Go(func() { l.renew(ls.ctx) })
	return l, nil
}

// Prepared is a login checked as far as it can be without a KDC: the
// krb5.conf parses, the keytab is readable and holds keys for the principal.
type Prepared struct {
	Principal string // expanded and with its realm
	Krb5Conf  string // the file read
	cfg       Config
	krb5      *config.Config
	kt        *keytab.Keytab
	name      types.PrincipalName
	realm     string
	// Warnings are advice that does not stop a login (a keytab others can read).
	Warnings []string
}

// Prepare checks cfg without contacting a KDC: `check` runs it.
func Prepare(cfg Config) (*Prepared, error) {
	p := &Prepared{cfg: cfg, Krb5Conf: Krb5ConfPath(cfg.Krb5Conf)}
	expanded := ExpandHost(cfg.Principal, LocalHost())
	fail := func(reason string, err error) (*Prepared, error) {
		return nil, &Error{Principal: expanded, Kind: KindConfig, Reason: reason, Err: err}
	}
	krb5, err := config.Load(p.Krb5Conf)
	if err != nil {
		return fail(unreadableKrb5Conf(p.Krb5Conf, cfg.Keytab, err))
	}
	p.krb5 = krb5
	comps, realm, err := splitPrincipal(expanded)
	if err != nil {
		return fail(err.Error(), err)
	}
	if realm == "" {
		realm = krb5.LibDefaults.DefaultRealm
	}
	if realm == "" {
		return fail("no realm in the principal and no default_realm in "+p.Krb5Conf, nil)
	}
	p.Principal = strings.Join(comps, "/") + "@" + realm
	p.name, p.realm = types.NewPrincipalName(1, strings.Join(comps, "/")), realm
	if err := p.loadKeytab(); err != nil {
		return nil, err
	}
	return p, nil
}

// unreadableKrb5Conf is the reason and error of a krb5.conf that cannot be
// read. The keytab is checked too, as far as it can be without krb5.conf
// (not which keys it holds): check then shows an operator both problems at
// once, not the second only after fixing the first.
func unreadableKrb5Conf(conf, ktPath string, err error) (string, error) {
	reason := fmt.Sprintf("krb5.conf %s cannot be read: %v", conf, err)
	if _, _, problem := readKeytab(ktPath); problem != nil {
		return reason + "; " + problem.Reason, errors.Join(err, problem.Err)
	}
	return reason, err
}

func (p *Prepared) loadKeytab() error {
	kt, perm, problem := readKeytab(p.cfg.Keytab)
	if problem != nil {
		problem.Principal = p.Principal
		return problem
	}
	if perm&0o077 != 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("keytab %s is readable by others (mode %04o): anyone who can read it can act as %s; chmod 0400 or 0600", p.cfg.Keytab, perm, p.Principal))
	}
	if !hasPrincipal(kt, p.name, p.realm) {
		return &Error{Principal: p.Principal, Kind: KindConfig,
			Reason: fmt.Sprintf("keytab %s holds no key for %s (it has: %s)", p.cfg.Keytab, p.Principal, strings.Join(keytabPrincipals(kt), ", "))}
	}
	p.kt = kt
	return nil
}

// readKeytab loads the keytab at path, with its permission bits. A keytab
// that cannot be used is a config error without its principal, which the
// caller fills in; which keys the keytab must hold is the caller's to check.
func readKeytab(path string) (*keytab.Keytab, fs.FileMode, *Error) {
	fail := func(reason string, err error) (*keytab.Keytab, fs.FileMode, *Error) {
		return nil, 0, &Error{Kind: KindConfig, Reason: reason, Err: err}
	}
	if path == "" {
		return fail("no keytab given", nil)
	}
	st, err := os.Stat(path)
	if err != nil {
		return fail(fmt.Sprintf("keytab %s: %v", path, errors.Unwrap(err)), err)
	}
	kt, err := keytab.Load(path)
	if err != nil {
		return fail(fmt.Sprintf("keytab %s cannot be read as a keytab: %v", path, unwrapPath(err)), err)
	}
	return kt, st.Mode().Perm(), nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func hasPrincipal(kt *keytab.Keytab, name types.PrincipalName, realm string) bool {
	for _, e := range kt.Entries {
		if e.Principal.Realm == realm && strings.Join(e.Principal.Components, "/") == name.PrincipalNameString() {
			return true
		}
	}
	return false
}

// keytabPrincipals names the principals of a keytab (names, never keys).
func keytabPrincipals(kt *keytab.Keytab) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range kt.Entries {
		if s := e.Principal.String(); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Login is one principal logged in from its keytab. Its Client is the one
// gokrb5 client every user of the login shares; renewal logs that client in
// again, so holders of the pointer always see a valid ticket.
type Login struct {
	*Prepared
	log *slog.Logger
	now func() time.Time

	cl *client.Client

	mu       sync.Mutex
	authTime time.Time // of the current TGT
	endTime  time.Time
}

// Client is the shared gokrb5 client (for colinmarc/hdfs and franz-go).
func (l *Login) Client() *client.Client { return l.cl }

// Expires is when the current ticket-granting ticket ends.
func (l *Login) Expires() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.endTime
}

// login obtains a TGT. An AS exchange of our own first learns the
// ticket's times (gokrb5 keeps them private) and classifies a refusal;
// Login then installs the session every holder of the client uses.
func (l *Login) login() error {
	if l.cl == nil {
		l.cl = client.NewWithKeytab(strings.Join(l.name.NameString, "/"), l.realm, l.kt, l.krb5, client.DisablePAFXFAST(true))
	}
	req, err := messages.NewASReqForTGT(l.realm, l.krb5, l.name)
	if err != nil {
		return classify(l.Principal, "login", err)
	}
	rep, err := l.cl.ASExchange(l.realm, req, 0)
	if err != nil {
		return classify(l.Principal, "login", err)
	}
	if err := l.cl.Login(); err != nil {
		return classify(l.Principal, "login", err)
	}
	l.mu.Lock()
	l.authTime, l.endTime = l.now(), rep.DecryptedEncPart.EndTime
	l.mu.Unlock()
	return nil
}

// ServiceTicket asks for a ticket to spn (service/host), naming a refusal.
func (l *Login) ServiceTicket(spn string) (messages.Ticket, types.EncryptionKey, error) {
	tkt, key, err := l.cl.GetServiceTicket(spn)
	if err != nil {
		return tkt, key, classify(l.Principal, "ticket for "+spn, err)
	}
	return tkt, key, nil
}

// renewWindow is the share of a ticket's lifetime after which it is
// replaced: Hadoop's UserGroupInformation uses the same 80%.
const renewWindow = 0.8

// retry bounds the waits between failed renewals.
const (
	retryFirst = time.Second
	retryMax   = 30 * time.Second
)

// nextCheck is how long to wait before the ticket should be replaced, at
// most the renew period.
func (l *Login) nextCheck() time.Duration {
	l.mu.Lock()
	life := l.endTime.Sub(l.authTime)
	due := l.authTime.Add(time.Duration(float64(life) * renewWindow))
	l.mu.Unlock()
	period := l.cfg.RenewPeriod
	if period <= 0 {
		period = DefaultRenewPeriod
	}
	return max(min(due.Sub(l.now()), period), 0)
}

// renew keeps the login fresh until ctx ends: a new TGT from the keytab
// once renewWindow of the current one's lifetime has passed. While the KDC
// cannot be reached it retries with backoff; the old ticket (and the
// service tickets obtained with it) serve until they expire, and the first
// success after the outage restores everything.
func (l *Login) renew(ctx context.Context) {
	wait := l.nextCheck()
	retry := retryFirst
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if l.nextCheck() > 0 {
			wait = l.nextCheck() // the renew period passed first: look again later
			continue
		}
		if err := l.login(); err != nil {
			l.log.Warn("kerberos ticket renewal failed; retrying", "expires_in", l.Expires().Sub(l.now()).Round(time.Second), "retry_in", retry, "err", err)
			wait, retry = retry, min(2*retry, retryMax)
			continue
		}
		retry = retryFirst
		wait = l.nextCheck()
		l.log.Info("kerberos ticket renewed from keytab", "keytab", l.cfg.Keytab, "expires", l.Expires().UTC().Format(time.RFC3339), "next_renewal_in", wait.Round(time.Second))
	}
}
