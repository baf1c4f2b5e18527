package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/types/known/anypb"

	aeroplanev1 "github.com/hangarhq/hangar/api/hangar/aeroplane/v1"
	hangarv1 "github.com/hangarhq/hangar/api/hangar/v1"
	"github.com/hangarhq/hangar/internal/nodetest"
	"github.com/hangarhq/hangar/server"
	"github.com/hangarhq/hangar/store/natsbus/natstest"
	"github.com/hangarhq/hangar/store/postgres/pgtest"
)

// The deploy/ examples are checked against the binary: every variable and
// flag they set is one of serve's and parses, their ports are the ones the
// settings listen on, their probes are the node's, and the alert rules and
// the dashboard name only metrics a node exports.

const deployDir = "../../deploy"

// drainTimeout is the node's drain of the calls in flight after the grace
// (server.Config.DrainTimeout's default).
const drainTimeout = 10 * time.Second

// serveVars are serve's flags by their environment variables.
func serveVars() map[string]*flag.Flag {
	fs, _ := serveFlags("serve")
	vars := map[string]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) {
		vars[envPrefix+"_"+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))] = f
	})
	return vars
}

// checkSettings parses serve's args with env as its only HANGAR_
// environment, as the deployment would start it, and returns the Config.
// Not parallel: it sets the environment.
func checkSettings(t *testing.T, what string, env map[string]string, args []string) server.Config {
	t.Helper()
	vars := serveVars()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, envPrefix+"_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	for k, v := range env {
		if vars[k] == nil {
			t.Errorf("%s: %s is not a variable of hangar serve", what, k)
		}
		t.Setenv(k, v)
	}
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("%s: runs %q, not hangar serve", what, args)
	}
	cfg, err := parseConfig("serve", args[1:])
	if err != nil {
		t.Fatalf("%s: hangar serve refuses its settings: %v", what, err)
	}
	return cfg
}

// port is the port of a listen address.
func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(p)
	if err != nil || perr != nil {
		t.Fatalf("listen address %q: %v", addr, err)
	}
	return n
}

// envFile reads a KEY=value file (systemd's EnvironmentFile, compose's
// env_file), skipping comments.
func envFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=value", path, line)
		}
		env[k] = v
	}
	return env
}

// checkGrace says whether a stop timeout leaves the node its drain grace
// and its drain.
func checkGrace(t *testing.T, what string, cfg server.Config, stop time.Duration) {
	t.Helper()
	if cfg.DrainGrace < 5*time.Second {
		t.Errorf("%s: drain grace %v: too short for a load balancer to notice", what, cfg.DrainGrace)
	}
	if stop < cfg.DrainGrace+drainTimeout {
		t.Errorf("%s: stopped after %v, before the drain grace (%v) and the drain (%v)", what, stop, cfg.DrainGrace, drainTimeout)
	}
}

// TestDeployVariablesAreServes: every HANGAR_ variable that a deploy file
// names is one of serve's.
func TestDeployVariablesAreServes(t *testing.T) {
	t.Parallel()
	vars := serveVars()
	re := regexp.MustCompile(`HANGAR_[A-Z0-9_]+`)
	err := filepath.WalkDir(deployDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		for _, v := range re.FindAllString(string(b), -1) {
			if vars[v] == nil {
				t.Errorf("%s names %s, which hangar serve does not read", p, v)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestContainerfile: the image runs hangar serve as a user other than
// root, exposes the ports its settings listen on, and its volume is the
// embedded store's directory.
func TestContainerfile(t *testing.T) {
	// Not parallel: it sets the environment.
	b, err := os.ReadFile(filepath.Join(deployDir, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	instr := map[string][]string{}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, " ")
		instr[k] = append(instr[k], strings.TrimSpace(v))
	}
	if got := instr["FROM"]; !slices.Equal(got, []string{"scratch"}) {
		t.Errorf("FROM %v; want scratch (nothing pulled)", got)
	}
	if u := strings.Join(instr["USER"], ""); u == "" || u == "root" || strings.HasPrefix(u, "0") {
		t.Errorf("USER %q: the image runs as root", u)
	}
	env := map[string]string{}
	for _, e := range instr["ENV"] {
		for _, kv := range strings.Fields(e) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	var entry, cmd []string
	if err := json.Unmarshal([]byte(strings.Join(instr["ENTRYPOINT"], "")), &entry); err != nil || len(entry) != 1 {
		t.Fatalf("ENTRYPOINT %v: %v", instr["ENTRYPOINT"], err)
	}
	if err := json.Unmarshal([]byte(strings.Join(instr["CMD"], "")), &cmd); err != nil {
		t.Fatalf("CMD %v: %v", instr["CMD"], err)
	}
	if !slices.ContainsFunc(instr["COPY"], func(c string) bool { return strings.HasSuffix(c, " "+entry[0]) && strings.HasPrefix(c, "hangar ") }) {
		t.Errorf("ENTRYPOINT %s is not the binary copied in (%v)", entry[0], instr["COPY"])
	}
	cfg := checkSettings(t, "Containerfile", env, cmd)
	var volumes []string
	if err := json.Unmarshal([]byte(strings.Join(instr["VOLUME"], "")), &volumes); err != nil || !slices.Equal(volumes, []string{cfg.DataDir}) {
		t.Errorf("VOLUME %v (%v); want the data directory %s", instr["VOLUME"], err, cfg.DataDir)
	}
	want := []string{strconv.Itoa(port(t, cfg.Listen)), strconv.Itoa(port(t, cfg.AdminListen))}
	if got := strings.Fields(strings.Join(instr["EXPOSE"], " ")); !slices.Equal(got, want) {
		t.Errorf("EXPOSE %v; the settings listen on %v", got, want)
	}
	if cfg.LogFormat != "json" {
		t.Errorf("the image logs %s", cfg.LogFormat)
	}
}

// TestEnvExample: the example environment file is settings serve takes.
func TestEnvExample(t *testing.T) {
	// Not parallel: it sets the environment.
	cfg := checkSettings(t, "hangar.env.example", envFile(t, filepath.Join(deployDir, "hangar.env.example")), []string{"serve"})
	if cfg.DatabaseURL == "" || cfg.AdminListen == "" {
		t.Errorf("the example has no database or no admin listener: %+v", cfg)
	}
}

// TestSystemdUnit: the unit runs hangar serve with settings it takes, as
// a dynamic user, with a stop timeout past the drain.
func TestSystemdUnit(t *testing.T) {
	// Not parallel: it sets the environment.
	b, err := os.ReadFile(filepath.Join(deployDir, "systemd", "hangar.service"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string][]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(line, "#") {
			keys[k] = append(keys[k], v)
		}
	}
	exec := strings.Fields(strings.Join(keys["ExecStart"], ""))
	if len(exec) < 2 || filepath.Base(exec[0]) != "hangar" {
		t.Fatalf("ExecStart %v", exec)
	}
	env := envFile(t, filepath.Join(deployDir, "hangar.env.example")) // EnvironmentFile's content
	for _, e := range keys["Environment"] {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	cfg := checkSettings(t, "hangar.service", env, exec[1:])
	if dir := strings.Join(keys["StateDirectory"], ""); filepath.Join("/var/lib", dir) != cfg.DataDir {
		t.Errorf("StateDirectory %s, data directory %s", dir, cfg.DataDir)
	}
	if strings.Join(keys["DynamicUser"], "") != "yes" && strings.Join(keys["User"], "") == "" {
		t.Error("the unit runs as root")
	}
	stop, err := time.ParseDuration(strings.Join(keys["TimeoutStopSec"], ""))
	if err != nil {
		t.Fatalf("TimeoutStopSec: %v", err)
	}
	checkGrace(t, "hangar.service", cfg, stop)
	if strings.Join(keys["KillSignal"], "") != "SIGTERM" {
		t.Errorf("KillSignal %v", keys["KillSignal"])
	}
}

// TestCompose: Hangar and Postgres; Hangar's settings parse, its database
// is the compose file's Postgres, its published ports are the ones it
// listens on, and its stop grace covers the drain.
func TestCompose(t *testing.T) {
	// Not parallel: it sets the environment.
	var c struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Command     []string          `yaml:"command"`
			EnvFile     string            `yaml:"env_file"`
			Environment map[string]string `yaml:"environment"`
			Ports       []string          `yaml:"ports"`
			StopGrace   string            `yaml:"stop_grace_period"`
			DependsOn   map[string]any    `yaml:"depends_on"`
		} `yaml:"services"`
	}
	b, err := os.ReadFile(filepath.Join(deployDir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	h, ok := c.Services["hangar"]
	if !ok || c.Services["postgres"].Image == "" {
		t.Fatalf("services %v: want hangar and postgres", slices.Collect(mapsKeys(c.Services)))
	}
	env := envFile(t, filepath.Join(deployDir, h.EnvFile+".example"))
	for k, v := range h.Environment {
		env[k] = v
	}
	cfg := checkSettings(t, "compose.yaml", env, h.Command)
	if !strings.Contains(cfg.DatabaseURL, "@postgres:5432/") || h.DependsOn["postgres"] == nil {
		t.Errorf("hangar's database %q is not the postgres service's", cfg.DatabaseURL)
	}
	var published []int
	for _, p := range h.Ports {
		parts := strings.Split(p, ":")
		n, _ := strconv.Atoi(parts[len(parts)-1])
		published = append(published, n)
	}
	if want := []int{port(t, cfg.Listen), port(t, cfg.AdminListen)}; !slices.Equal(published, want) {
		t.Errorf("ports %v; hangar listens on %v", h.Ports, want)
	}
	stop, err := time.ParseDuration(h.StopGrace)
	if err != nil {
		t.Fatalf("stop_grace_period: %v", err)
	}
	checkGrace(t, "compose.yaml", cfg, stop)
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// k8sObject is the part of a Kubernetes object the test reads.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		MinAvailable int `yaml:"minAvailable"`
		Ports        []struct {
			Name       string `yaml:"name"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				TerminationGrace int `yaml:"terminationGracePeriodSeconds"`
				Security         struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
					RunAsUser    int  `yaml:"runAsUser"`
				} `yaml:"securityContext"`
				Containers []struct {
					Args    []string `yaml:"args"`
					EnvFrom []struct {
						ConfigMap *struct{ Name string } `yaml:"configMapRef"`
						Secret    *struct{ Name string } `yaml:"secretRef"`
					} `yaml:"envFrom"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					Liveness  k8sProbe `yaml:"livenessProbe"`
					Readiness k8sProbe `yaml:"readinessProbe"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sProbe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
	PeriodSeconds    int `yaml:"periodSeconds"`
	FailureThreshold int `yaml:"failureThreshold"`
}

// TestKubernetes: the Deployment runs hangar serve with the ConfigMap's
// and the Secret's settings, names the ports its settings listen on, probes
// /livez and /readyz on the admin port often enough for the drain grace,
// gives the drain time to finish and runs as a user other than root; the
// Service and the PodDisruptionBudget select its pods.
func TestKubernetes(t *testing.T) {
	// Not parallel: it sets the environment.
	f, err := os.Open(filepath.Join(deployDir, "kubernetes", "hangar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs := map[string]k8sObject{}
	dec := yaml.NewDecoder(f)
	for {
		var o k8sObject
		if err := dec.Decode(&o); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		objs[o.Kind] = o
	}
	for _, k := range []string{"ConfigMap", "Secret", "Deployment", "Service", "PodDisruptionBudget"} {
		if _, ok := objs[k]; !ok {
			t.Fatalf("no %s", k)
		}
	}
	d := objs["Deployment"]
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	env := map[string]string{}
	for _, ef := range c.EnvFrom {
		switch {
		case ef.ConfigMap != nil && ef.ConfigMap.Name == objs["ConfigMap"].Metadata.Name:
			for k, v := range objs["ConfigMap"].Data {
				env[k] = v
			}
		case ef.Secret != nil && ef.Secret.Name == objs["Secret"].Metadata.Name:
			for k, v := range objs["Secret"].StringData {
				env[k] = v
			}
		default:
			t.Errorf("envFrom %+v names neither the ConfigMap nor the Secret", ef)
		}
	}
	cfg := checkSettings(t, "the Deployment", env, c.Args)
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["api"] != port(t, cfg.Listen) || ports["admin"] != port(t, cfg.AdminListen) {
		t.Errorf("container ports %v; hangar listens on %s and %s", ports, cfg.Listen, cfg.AdminListen)
	}
	for _, p := range []struct {
		name  string
		probe k8sProbe
		path  string
	}{{"liveness", c.Liveness, server.LivePath}, {"readiness", c.Readiness, server.ReadyPath}} {
		if p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port != "admin" {
			t.Errorf("%s probe %+v; want %s on the admin port", p.name, p.probe.HTTPGet, p.path)
		}
	}
	if r := c.Readiness; time.Duration(r.PeriodSeconds*max(r.FailureThreshold, 1))*time.Second >= cfg.DrainGrace {
		t.Errorf("the readiness probe notices a drain after %ds×%d, not within the drain grace %v", r.PeriodSeconds, r.FailureThreshold, cfg.DrainGrace)
	}
	checkGrace(t, "the Deployment", cfg, time.Duration(pod.TerminationGrace)*time.Second)
	if !pod.Security.RunAsNonRoot || pod.Security.RunAsUser == 0 {
		t.Errorf("the pod may run as root: %+v", pod.Security)
	}
	labels := d.Spec.Template.Metadata.Labels
	for _, k := range []string{"Deployment", "PodDisruptionBudget"} {
		for lk, lv := range objs[k].Spec.Selector.MatchLabels {
			if labels[lk] != lv {
				t.Errorf("the %s's selector %v does not select the pods %v", k, objs[k].Spec.Selector.MatchLabels, labels)
			}
		}
	}
	if pdb := objs["PodDisruptionBudget"]; pdb.Spec.MinAvailable < 1 {
		t.Errorf("the PodDisruptionBudget keeps %d pods", pdb.Spec.MinAvailable)
	}
	if svc := objs["Service"]; len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != "api" {
		t.Errorf("the Service's ports %+v; want the api port alone (the admin port stays private)", svc.Spec.Ports)
	}
}

// metricNames are the names in PromQL expressions that a node would export
// (Prometheus's own up aside).
var metricNames = regexp.MustCompile(`\b(?:hangar|grpc|go|process)_[a-z0-9_]+\b`)

// TestAlertsAndDashboardMetrics: every metric name in the example alert
// rules and in the dashboard is one that a node running a match, on
// Postgres with a NATS bus, exports at /metrics.
func TestAlertsAndDashboardMetrics(t *testing.T) {
	t.Parallel()
	url := natstest.URL(t)
	n := nodetest.Node(t, server.Config{DatabaseURL: pgtest.Database(t), CrossNode: true, Bus: url,
		BusPrefix: natstest.Prefix(t, url), AdminListen: "127.0.0.1:0"})
	ada := nodetest.NewPlayer(t, n.Addr(), "Ada")
	cr, err := ada.Matches.CreateMatch(ada.Ctx(), &hangarv1.CreateMatchRequest{Game: "aeroplane", SeatCount: 2, BotSeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := cr.GetMatch()
	ctx, cancel := context.WithCancel(ada.Ctx())
	w, err := ada.Matches.WatchMatch(ctx, &hangarv1.WatchMatchRequest{MatchId: m.GetMatchId()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if m.GetTurnSeat() == ada.Match(t, m.GetMatchId()).GetTurnSeat() {
		roll, _ := anypb.New(&aeroplanev1.Roll{})
		_, _ = ada.Moves.Act(ada.Ctx(), &hangarv1.ActRequest{MatchId: m.GetMatchId(), ExpectedVersion: m.GetVersion(), RequestId: "r1", Action: roll})
	}
	resp, err := http.Get("http://" + n.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	exported, labels := map[string]bool{}, map[string]bool{}
	labelName := regexp.MustCompile(`([a-z_]+)="`)
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		series, _, _ := strings.Cut(line, " ")
		name, ls, _ := strings.Cut(series, "{")
		exported[name] = true
		for _, l := range labelName.FindAllStringSubmatch(ls, -1) {
			labels[l[1]] = true
		}
	}
	check := func(file, expr string) {
		for _, name := range metricNames.FindAllString(expr, -1) {
			if !exported[name] && !labels[name] { // grpc_code is a label
				t.Errorf("%s: %s is not exported: %s", file, name, expr)
			}
		}
	}

	b, err := os.ReadFile(filepath.Join(deployDir, "prometheus", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("a rule without a name or an expression: %+v", r)
			}
			check("alerts.yaml "+r.Alert, r.Expr)
			alerts++
		}
	}
	b, err = os.ReadFile(filepath.Join(deployDir, "grafana", "hangar.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	exprs := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			check("hangar.json "+p.Title, tg.Expr)
			exprs++
		}
	}
	if alerts < 5 || exprs < 10 {
		t.Errorf("%d alerts, %d dashboard queries", alerts, exprs)
	}
}
