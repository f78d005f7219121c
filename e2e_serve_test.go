package main

// End to end with the real thing: `countertop serve` as a process watching
// a real redis-server, scraped by a real Prometheus (Debian's) that
// evaluates docs/alerts' rules.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
)

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// eventually polls cond until it holds, failing with what it last said
// after deadline.
func eventually(t *testing.T, deadline time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(deadline)
	var last string
	for time.Now().Before(end) {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s; last: %s", what, deadline, last)
}

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// alertState returns the state of alert name in Prometheus's
// /api/v1/alerts ("" when it is not active), and the answer.
func alertState(prom, name string) (string, string) {
	code, body := httpGet("http://" + prom + "/api/v1/alerts")
	if code != http.StatusOK {
		return "", body
	}
	var r struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return "", err.Error()
	}
	for _, a := range r.Data.Alerts {
		if a.Labels["alertname"] == name {
			return a.State, body
		}
	}
	return "", body
}

// startPrometheus runs Debian's prometheus on a free port, scraping target
// every second with the rules of docs/alerts, and returns its address.
// The rules wait a minute or more (for:) before firing, so that a key
// caught between INCR and EXPIRE pages nobody; here they wait a second.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus not found on PATH: install Debian's prometheus package (apt-get install prometheus) or run `make test`, which does")
	}
	rules, err := os.ReadFile("docs/alerts/countertop.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	short := regexp.MustCompile(`(?m)^(\s+for:) \S+$`).ReplaceAll(rules, []byte("$1 1s"))
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), short, 0o600); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: countertop
    static_configs: [{targets: [%q]}]
`, filepath.Join(dir, "rules.yml"), target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("prometheus's log:\n%s", out)
		}
	})
	eventually(t, 30*time.Second, "prometheus ready", func() (bool, string) {
		code, body := httpGet("http://" + addr + "/-/ready")
		return code == http.StatusOK, body
	})
	return addr
}

// A counter INCRed without EXPIRE past its limit fires the stuck alert in
// a real Prometheus scraping `countertop serve`; EXPIRE NX resolves it;
// Redis stopping turns /healthz 503 and fires the not-live alert. SIGTERM
// then ends serve with exit 0.
func TestServeAlertsInPrometheus(t *testing.T) {
	const password = "pw-never-shown-7f3a"
	s := redistest.Start(t, "--requirepass", password)
	listen := freeAddr(t)
	var stderr strings.Builder
	serve := exec.Command(binary(t), "serve", "--url", s.URL(), "--pattern", "rl:*", "--limit", "5", "--window", "1m",
		"--mode", "poll", "--interval", "200ms", "--listen", listen, "--metrics-keys", "10")
	serve.Env = append(os.Environ(), "REDIS_PASSWORD="+password)
	serve.Stderr = &stderr
	// shown is every body serve answered, searched for the password at the end.
	var shown strings.Builder
	httpGet := func(url string) (int, string) {
		code, body := httpGet(url)
		shown.WriteString(body)
		return code, body
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	t.Cleanup(func() {
		serve.Process.Kill()
		if t.Failed() {
			t.Logf("serve's stderr:\n%s", stderr.String())
		}
	})
	eventually(t, 20*time.Second, "serve's /healthz 200", func() (bool, string) {
		code, body := httpGet("http://" + listen + "/healthz")
		return code == http.StatusOK, body
	})

	// A second serve on the same port says so and exits 2.
	second := exec.Command(binary(t), "serve", "--url", s.URL(), "--listen", listen)
	second.Env = append(os.Environ(), "REDIS_PASSWORD="+password)
	out, err := second.CombinedOutput()
	shown.Write(out)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "another process uses that port") {
		t.Errorf("serve on a port in use: %v, %q; want exit 2 and a sentence saying so", err, out)
	}

	prom := startPrometheus(t, listen)
	for range 6 {
		s.Do(t, "INCR", "rl:client-1") // and the EXPIRE that never comes
	}
	eventually(t, 60*time.Second, "CountertopKeyStuck firing", func() (bool, string) {
		state, body := alertState(prom, "CountertopKeyStuck")
		return state == "firing", body
	})
	if _, body := httpGet("http://" + listen + "/metrics"); !strings.Contains(body, `countertop_problem_key{key="rl:client-1",rule="",status="stuck"} 1`) {
		t.Errorf("/metrics has no series for the stuck key:\n%s", body)
	}
	if _, body := httpGet("http://" + listen + "/problems"); !strings.Contains(body, `"rl:client-1"`) {
		t.Errorf("/problems does not list the stuck key:\n%s", body)
	}

	s.Do(t, "EXPIRE", "rl:client-1", "60", "NX")
	eventually(t, 60*time.Second, "CountertopKeyStuck resolved", func() (bool, string) {
		state, body := alertState(prom, "CountertopKeyStuck")
		return state == "", body
	})

	s.Stop()
	eventually(t, 30*time.Second, "serve's /healthz 503", func() (bool, string) {
		code, body := httpGet("http://" + listen + "/healthz")
		return code == http.StatusServiceUnavailable && strings.TrimSpace(body) != "", fmt.Sprint(code, " ", body)
	})
	eventually(t, 60*time.Second, "CountertopNotLive firing", func() (bool, string) {
		state, body := alertState(prom, "CountertopNotLive")
		return state == "firing", body
	})

	sent := time.Now()
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v, want exit 0", err)
		}
		t.Logf("serve ended %s after SIGTERM", time.Since(sent))
	case <-time.After(5 * time.Second):
		t.Fatal("serve still runs 5s after SIGTERM")
	}
	if strings.Contains(stderr.String(), password) || strings.Contains(shown.String(), password) {
		t.Errorf("serve showed Redis's password on stderr or over HTTP:\n%s\n%s", stderr.String(), shown.String())
	}
}

// On a Redis with hash-field TTLs, a hash whose fields carry TTLs is a row
// a field in serve as on the screen: the field left without a TTL is a
// no-expiry problem in /problems (its key and field) and a series of its
// own, while its sibling with a TTL is none; given a TTL, it leaves both.
func TestServeListsHashFieldRows(t *testing.T) {
	srv := redistest.Start(t)
	srv.RequireFieldTTL(t)
	srv.Do(t, "HSET", "quota:u1", "api", "3", "login", "4")
	srv.Do(t, "HPEXPIRE", "quota:u1", "60000", "FIELDS", "1", "api")
	listen := freeAddr(t)
	var stderr strings.Builder
	serve := exec.Command(binary(t), "serve", "--url", srv.URL(), "--pattern", "quota:*", "--limit", "10", "--window", "1m",
		"--mode", "poll", "--interval", "200ms", "--listen", listen, "--metrics-keys", "10")
	serve.Stderr = &stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Kill()
		serve.Wait()
		if t.Failed() {
			t.Logf("serve's stderr:\n%s", stderr.String())
		}
	})
	// problems is what /problems lists: "key field status" a row.
	problems := func() ([]string, string) {
		code, body := httpGet("http://" + listen + "/problems")
		var doc struct {
			Counters []struct {
				Key    string  `json:"key"`
				Field  *string `json:"field"`
				Status string  `json:"status"`
			} `json:"counters"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &doc) != nil {
			return nil, fmt.Sprint(code, " ", body)
		}
		var rows []string
		for _, c := range doc.Counters {
			field := "(whole key)"
			if c.Field != nil {
				field = *c.Field
			}
			rows = append(rows, c.Key+" "+field+" "+c.Status)
		}
		return rows, body
	}
	eventually(t, 20*time.Second, "/problems listing quota:u1's login field as no-expiry", func() (bool, string) {
		rows, body := problems()
		return slices.Equal(rows, []string{"quota:u1 login no-expiry"}), body
	})
	if _, body := httpGet("http://" + listen + "/metrics"); !strings.Contains(body, `countertop_problem_key{key="quota:u1 › login",rule="",status="no-expiry"} 1`) ||
		strings.Contains(body, `key="quota:u1 › api"`) {
		t.Errorf("/metrics: want one problem series, for quota:u1's login field:\n%s", body)
	}

	srv.Do(t, "HPEXPIRE", "quota:u1", "60000", "FIELDS", "1", "login")
	eventually(t, 20*time.Second, "/problems empty once login has a TTL", func() (bool, string) {
		rows, body := problems()
		return rows == nil && strings.Contains(body, `"counters"`), body
	})
	if _, body := httpGet("http://" + listen + "/metrics"); strings.Contains(body, "countertop_problem_key{") {
		t.Errorf("/metrics still has a problem series once every field has a TTL:\n%s", body)
	}
}
