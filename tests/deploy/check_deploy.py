#!/usr/bin/python3
"""check_deploy.py STE DEPLOY_DIR [ARGV_JSON] — static checks of deploy/ (no cluster).

1. Every YAML file under DEPLOY_DIR parses; the k8s manifests have the
   kinds and fields they need (Deployment + Service for the scheduler, an
   Indexed Job for the workers with an init checkout into an emptyDir, a Job
   for the record client, the Secret and ConfigMap they name, a
   kustomization listing every manifest), and every reference among them
   (labels, ports, volumes, Secret keys, ConfigMap names) resolves.
2. Every `ste ...` command line (k8s container command + args, systemd
   ExecStart/ExecStartPre) uses only flags `ste <subcommand> --help` lists,
   with a value exactly where the help gives one; the scheduler listens on
   the port the Service targets and the workers and the record client dial
   the Service's name and port (systemd: ste-scheduler.env STE_LISTEN vs
   ste-worker.env STE_SCHEDULER); token files are where the Secret is
   mounted / a LoadCredential= name; checkout dirs agree.
3. The Containerfile builds the Debian package (`make package`) and its
   runtime stage apt-installs it and links the /usr/local paths the
   manifests and units run; the package's Depends (dpkg-deb -f of the
   ste_*.deb beside STE) name the Debian package of every library `ste`
   links directly (readelf -d of STE).

Prints one line per failure and a summary of counts; exit 1 on any failure.
With ARGV_JSON, also writes there the k8s containers' ste argv
({"scheduler": [...], "worker": [...], "record": [...]}).
Debian's python3 and python3-yaml only.
"""
import glob
import os
import re
import shlex
import subprocess
import sys

import yaml

STE, DEPLOY = sys.argv[1], sys.argv[2]
failures = []
counts = {"yaml files": 0, "k8s objects": 0, "ste command lines": 0, "flags checked": 0,
          "cross-references": 0, "units": 0}


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def ref_ok(cond, msg):
    counts["cross-references"] += 1
    if not cond:
        fail(msg)
    return cond


def get(obj, path, where):
    """obj at a dotted path, or a failure naming what is missing."""
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            fail(f"{where}: missing {path}")
            return None
        cur = cur[part]
    return cur


# ---- ste --help: the flags of each subcommand ------------------------------
HELP_FLAG = re.compile(r"^\s+(?:-([A-Za-z]), )?--([a-z][a-z0-9-]*)(?:\s+([A-Z][A-Z0-9_]*)\b)?")
_help = {}


def flags_of(sub):
    """{"--name": takes_value, "-x": takes_value} from `ste SUB --help`."""
    if sub not in _help:
        out = subprocess.run([STE, sub, "--help"], capture_output=True, text=True)
        flags = {}
        for line in (out.stdout + out.stderr).splitlines():
            m = HELP_FLAG.match(line)
            if m:
                short, name, value = m.groups()
                flags["--" + name] = value is not None
                if short:
                    flags["-" + short] = value is not None
        if not flags:
            fail(f"`ste {sub} --help` lists no flags (exit {out.returncode})")
        _help[sub] = flags
    return _help[sub]


def check_ste_argv(argv, where):
    """argv without the program; returns {flag: value} for the cross checks."""
    counts["ste command lines"] += 1
    if not argv:
        fail(f"{where}: `ste` without a subcommand")
        return None, {}
    sub, rest = argv[0], argv[1:]
    flags = flags_of(sub)
    seen = {}
    i = 0
    while i < len(rest):
        tok = rest[i]
        if not tok.startswith("-"):
            fail(f"{where}: ste {sub}: unexpected argument {tok!r}")
            i += 1
            continue
        name, eq, value = tok.partition("=")
        counts["flags checked"] += 1
        if name not in flags:
            fail(f"{where}: ste {sub}: {name} is not a flag of `ste {sub} --help`")
            i += 1
            continue
        if flags[name] and not eq:
            if i + 1 >= len(rest):
                fail(f"{where}: ste {sub}: {name} needs a value")
                break
            value = rest[i + 1]
            i += 1
        elif not flags[name] and eq:
            fail(f"{where}: ste {sub}: {name} takes no value")
        seen[name] = value if flags[name] else True
        i += 1
    required = {"scheduler": ["--listen", "--store", "--token-file"],
                "worker": ["--scheduler", "--token-file"],
                "record": ["--scheduler", "--token-file", "--wait"]}.get(sub, [])
    for r in required:
        ref_ok(r in seen, f"{where}: ste {sub} without {r}")
    return sub, seen


def host_port(addr, where):
    m = re.fullmatch(r"(.+):(\d+)", addr or "")
    if not m:
        fail(f"{where}: {addr!r} is not HOST:PORT")
        return None, None
    return m.group(1), int(m.group(2))


# ---- 1. YAML ---------------------------------------------------------------
docs = {}  # k8s file -> [objects]
for path in sorted(glob.glob(os.path.join(DEPLOY, "**", "*.y*ml"), recursive=True)):
    counts["yaml files"] += 1
    try:
        with open(path) as f:
            loaded = [d for d in yaml.safe_load_all(f) if d is not None]
    except yaml.YAMLError as e:
        fail(f"{path}: not YAML: {e}")
        continue
    if os.path.dirname(path) == os.path.join(DEPLOY, "k8s"):
        docs[os.path.basename(path)] = loaded

objects = []
for fname, objs in docs.items():
    for o in objs:
        where = f"k8s/{fname}"
        if not isinstance(o, dict):
            fail(f"{where}: a document that is not a mapping")
            continue
        kind = o.get("kind")
        if kind is None or "apiVersion" not in o:
            fail(f"{where}: a document without apiVersion/kind")
            continue
        counts["k8s objects"] += 1
        if kind != "Kustomization" and get(o, "metadata.name", where) is None:
            continue
        objects.append((fname, o))


def by_kind(kind):
    return [(f, o) for f, o in objects if o["kind"] == kind]


API = {"Deployment": "apps/v1", "Service": "v1", "Job": "batch/v1", "Secret": "v1",
       "ConfigMap": "v1", "Kustomization": "kustomize.config.k8s.io/v1beta1"}
for f, o in objects:
    if o["kind"] in API:
        ref_ok(o["apiVersion"] == API[o["kind"]],
               f"k8s/{f}: {o['kind']} has apiVersion {o['apiVersion']}, expected {API[o['kind']]}")
    else:
        fail(f"k8s/{f}: unexpected kind {o['kind']}")

for kind, n in [("Deployment", 1), ("Service", 1), ("Job", 2), ("Secret", 1), ("ConfigMap", 1),
                ("Kustomization", 1)]:
    ref_ok(len(by_kind(kind)) == n, f"k8s: {len(by_kind(kind))} {kind} objects, expected {n}")

# kustomization: lists exactly the other manifests
for f, k in by_kind("Kustomization"):
    res = k.get("resources") or []
    others = sorted(x for x in docs if x != f)
    ref_ok(sorted(res) == others, f"k8s/{f}: resources {sorted(res)} != the manifests {others}")

secrets = {o["metadata"]["name"]: set((o.get("data") or {}) | (o.get("stringData") or {}))
           for _, o in by_kind("Secret")}
configmaps = {o["metadata"]["name"]: set(o.get("data") or {}) for _, o in by_kind("ConfigMap")}


def check_pod(pod, where):
    """Containers, volumes and their references; returns (containers, volumes)."""
    conts = pod.get("containers") or []
    ref_ok(len(conts) > 0, f"{where}: no containers")
    inits = pod.get("initContainers") or []
    vols = {v.get("name"): v for v in pod.get("volumes") or []}
    for c in inits + conts:
        cw = f"{where} container {c.get('name')}"
        for field in ("name", "image"):
            ref_ok(field in c, f"{cw}: missing {field}")
        for m in c.get("volumeMounts") or []:
            ref_ok(m.get("name") in vols, f"{cw}: mounts unknown volume {m.get('name')}")
        for e in c.get("env") or []:
            sk = (e.get("valueFrom") or {}).get("secretKeyRef")
            if sk:
                ref_ok(sk.get("key") in secrets.get(sk.get("name"), set()),
                       f"{cw}: secretKeyRef {sk.get('name')}/{sk.get('key')} does not exist")
        for ef in c.get("envFrom") or []:
            if "configMapRef" in ef:
                ref_ok(ef["configMapRef"].get("name") in configmaps,
                       f"{cw}: configMapRef {ef['configMapRef'].get('name')} does not exist")
    for name, v in vols.items():
        if "secret" in v:
            s = v["secret"].get("secretName")
            ref_ok(s in secrets, f"{where}: volume {name}: no Secret {s}")
            for it in v["secret"].get("items") or []:
                ref_ok(it.get("key") in secrets.get(s, set()),
                       f"{where}: volume {name}: Secret {s} has no key {it.get('key')}")
    return inits, conts, vols


def ste_argv(c):
    cmd = list(c.get("command") or [])
    if cmd and os.path.basename(cmd[0]) == "ste":
        return cmd[1:] + [str(a) for a in c.get("args") or []]
    return None


def token_mounted(c, vols, token_path, where):
    """token_path is a file of a Secret volume mounted in container c."""
    d, base = os.path.split(token_path or "")
    for m in c.get("volumeMounts") or []:
        v = vols.get(m.get("name")) or {}
        if m.get("mountPath") == d and "secret" in v:
            keys = [it.get("path") for it in v["secret"].get("items") or []]
            if base in keys or not keys:
                return ref_ok(True, "")
    return ref_ok(False, f"{where}: --token-file {token_path} is not a mounted Secret file")


# scheduler: Deployment + Service
sched_port = None
k8s_argv = {}  # scheduler / worker / record -> the argv after `ste`
for f, d in by_kind("Deployment"):
    where = f"k8s/{f} Deployment {d['metadata']['name']}"
    sel = get(d, "spec.selector.matchLabels", where) or {}
    labels = get(d, "spec.template.metadata.labels", where) or {}
    ref_ok(sel and all(labels.get(k) == v for k, v in sel.items()),
           f"{where}: selector {sel} does not match the template's labels {labels}")
    pod = get(d, "spec.template.spec", where) or {}
    inits, conts, vols = check_pod(pod, where)
    for c in conts:
        argv = ste_argv(c)
        if argv is None:
            fail(f"{where}: container {c.get('name')} does not run ste")
            continue
        sub, seen = check_ste_argv(argv, where)
        k8s_argv["scheduler"] = argv
        ref_ok(sub == "scheduler", f"{where}: runs ste {sub}, expected scheduler")
        host, port = host_port(seen.get("--listen"), where + " --listen")
        ports = {p.get("name"): p.get("containerPort") for p in c.get("ports") or []}
        ref_ok(port in ports.values(), f"{where}: --listen port {port} is not a containerPort {ports}")
        sched_port = (port, ports, labels)
        token_mounted(c, vols, seen.get("--token-file"), where)
        for probe in ("readinessProbe",):
            tcp = (c.get(probe) or {}).get("tcpSocket")
            if ref_ok(tcp is not None, f"{where}: no {probe}.tcpSocket"):
                p = tcp.get("port")
                ref_ok(ports.get(p, p) == port, f"{where}: {probe} port {p} is not --listen's {port}")

service_addr = set()
for f, s in by_kind("Service"):
    where = f"k8s/{f} Service {s['metadata']['name']}"
    sel = get(s, "spec.selector", where) or {}
    ports = get(s, "spec.ports", where) or []
    ref_ok(len(ports) == 1, f"{where}: {len(ports)} ports, expected 1")
    if sched_port:
        port, cports, labels = sched_port
        ref_ok(sel and all(labels.get(k) == v for k, v in sel.items()),
               f"{where}: selector {sel} does not select the scheduler's pods {labels}")
        for p in ports:
            t = p.get("targetPort", p.get("port"))
            ref_ok(cports.get(t, t) == port,
                   f"{where}: targetPort {t} is not the scheduler's --listen port {port}")
            service_addr.add((s["metadata"]["name"], p.get("port")))

jobs = by_kind("Job")
indexed = [(f, j) for f, j in jobs if (j.get("spec") or {}).get("completionMode") == "Indexed"]
ref_ok(len(indexed) == 1, f"k8s: {len(indexed)} Indexed Jobs, expected 1 (the workers)")
for f, j in jobs:
    where = f"k8s/{f} Job {j['metadata']['name']}"
    spec = j.get("spec") or {}
    pod = get(j, "spec.template.spec", where) or {}
    ref_ok(pod.get("restartPolicy") in ("Never", "OnFailure"),
           f"{where}: restartPolicy must be Never or OnFailure")
    inits, conts, vols = check_pod(pod, where)
    is_workers = spec.get("completionMode") == "Indexed"
    if is_workers:
        for field in ("completions", "parallelism"):
            ref_ok(isinstance(spec.get(field), int) and spec[field] > 0,
                   f"{where}: {field} must be a positive integer")
    # the checkout: an init container running ste-checkout REPO REF DIR into an emptyDir
    ref_ok(len(inits) == 1, f"{where}: {len(inits)} init containers, expected 1 (the checkout)")
    checkout_dir = None
    for c in inits:
        cmd = list(c.get("command") or []) + [str(a) for a in c.get("args") or []]
        if ref_ok(cmd and os.path.basename(cmd[0]) == "ste-checkout" and len(cmd) == 4,
                  f"{where}: init container {c.get('name')} is not `ste-checkout REPO REF DIR`"):
            checkout_dir = cmd[3]
            for m in c.get("volumeMounts") or []:
                if checkout_dir.startswith(m["mountPath"].rstrip("/") + "/"):
                    ref_ok("emptyDir" in vols.get(m["name"], {}),
                           f"{where}: the checkout volume {m['name']} is not an emptyDir")
                    break
            else:
                fail(f"{where}: the checkout dir {checkout_dir} is on no volume")
    for c in conts:
        argv = ste_argv(c)
        if argv is None:
            fail(f"{where}: container {c.get('name')} does not run ste")
            continue
        sub, seen = check_ste_argv(argv, where)
        k8s_argv["worker" if is_workers else "record"] = argv
        ref_ok(sub == ("worker" if is_workers else "record"),
               f"{where}: runs ste {sub}")
        ref_ok(c.get("workingDir") == checkout_dir,
               f"{where}: workingDir {c.get('workingDir')} is not the checkout {checkout_dir}")
        host, port = host_port(seen.get("--scheduler"), where + " --scheduler")
        ref_ok((host.split(".")[0] if host else None, port) in service_addr,
               f"{where}: --scheduler {host}:{port} is not the Service {sorted(service_addr)}")
        token_mounted(c, vols, seen.get("--token-file"), where)

# ---- 2. systemd units ------------------------------------------------------
def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                env[k] = v
    return env


def unit_settings(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", ";", "[")) and "=" in line:
                k, v = line.split("=", 1)
                out.append((k.strip(), v.strip()))
    return out


sysd = os.path.join(DEPLOY, "systemd")
units = sorted(glob.glob(os.path.join(sysd, "*.service")))
ref_ok(sorted(map(os.path.basename, units)) == ["ste-scheduler.service", "ste-worker@.service"],
       f"systemd: units {units}")
listen = dial = None
for u in units:
    counts["units"] += 1
    name = os.path.basename(u)
    where = f"systemd/{name}"
    settings = unit_settings(u)
    env = {}
    for k, v in settings:
        if k == "EnvironmentFile":
            p = os.path.join(sysd, os.path.basename(v.lstrip("-")))
            if os.path.exists(p):
                env.update(read_env(p))
            elif not v.startswith("-"):
                fail(f"{where}: EnvironmentFile {v} is not shipped as {p}")
    creds = {v.split(":", 1)[0] for k, v in settings if k == "LoadCredential"}
    state = [v for k, v in settings if k == "StateDirectory"]
    workdir = dict(settings).get("WorkingDirectory")
    for k in ("DynamicUser", "ProtectSystem", "ProtectHome", "PrivateTmp", "NoNewPrivileges",
              "Restart", "StateDirectory"):
        ref_ok(any(s == k for s, _ in settings), f"{where}: no {k}=")
    for k, v in settings:
        if k not in ("ExecStart", "ExecStartPre"):
            continue
        argv = shlex.split(v.lstrip("-@:+!"))
        prog = os.path.basename(argv[0])
        resolved = [re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), m.group(0)), a)
                    for a in argv[1:]]
        if prog == "ste-checkout":
            if ref_ok(len(resolved) == 3, f"{where}: {k} ste-checkout wants REPO REF DIR"):
                ref_ok(resolved[2] == workdir,
                       f"{where}: checkout dir {resolved[2]} is not WorkingDirectory {workdir}")
                ref_ok(any(resolved[2] == "/var/lib/" + s for s in state),
                       f"{where}: checkout dir {resolved[2]} is not the StateDirectory {state}")
            continue
        if prog != "ste":
            fail(f"{where}: {k} runs {argv[0]}, not ste or ste-checkout")
            continue
        sub, seen = check_ste_argv(resolved, where)
        tf = seen.get("--token-file", "")
        ref_ok(tf.startswith("${CREDENTIALS_DIRECTORY}/") and os.path.basename(tf) in creds,
               f"{where}: --token-file {tf} is not a LoadCredential= ({sorted(creds)})")
        for flag in ("--listen", "--scheduler", "--store", "--jobs", "-j", "--wait"):
            if isinstance(seen.get(flag), str):
                ref_ok("${" not in seen[flag],
                       f"{where}: {flag} {seen[flag]}: variable not set by its EnvironmentFile")
        if sub == "scheduler":
            listen = seen.get("--listen")
        elif sub == "worker":
            dial = seen.get("--scheduler")
if listen and dial:
    _, lport = host_port(listen, "systemd STE_LISTEN")
    _, dport = host_port(dial, "systemd STE_SCHEDULER")
    ref_ok(lport == dport, f"systemd: the workers dial port {dport}, the scheduler listens on {lport}")
else:
    fail("systemd: no scheduler --listen or worker --scheduler found")

# ---- 3. Containerfile ------------------------------------------------------
cf_path = os.path.join(DEPLOY, "container", "Containerfile")
with open(cf_path) as f:
    cf = f.read()
ref_ok(re.search(r"^FROM \S*debian:12\S* AS build", cf, re.M) is not None,
       "Containerfile: the build stage is not Debian 12")
ref_ok("make package" in cf, "Containerfile: the build stage does not `make package`")
runtime = cf.split("\nFROM ")[-1]
# The runtime stage installs the package with apt (which brings its
# Depends) and links the /usr/local paths the manifests and units run.
ref_ok(re.search(r"apt-get install[^\n]*(\\\n[^\n]*)*?/opt/ste/ste_\*\.deb", runtime) is not None,
       "Containerfile: the runtime stage does not apt-get install the package (/opt/ste/ste_*.deb)")
for target, link in (("/usr/bin/ste", "/usr/local/bin/ste"),
                     ("/usr/lib/ste/ste-checkout", "/usr/local/lib/ste/ste-checkout")):
    ref_ok(f"ln -s {target} {link}" in runtime, f"Containerfile: does not link {link} to {target}")
# The package's Depends (dpkg-shlibdeps) name the Debian package of every
# library `ste` links directly (readelf -d of STE); the package is the one
# cpack wrote beside STE (make test runs cpack before ctest).
debs = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(STE)), "ste_*.deb")),
              key=os.path.getmtime)
depends = ""
if ref_ok(len(debs) > 0, f"no ste_*.deb beside {STE}: run cpack (make package)"):
    depends = subprocess.run(["dpkg-deb", "-f", debs[-1], "Depends"], capture_output=True,
                             text=True).stdout
needed = subprocess.run(["readelf", "-d", STE], capture_output=True, text=True).stdout
# (the dynamic loader, ld-linux*, is libc6's)
libs = [l for l in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", needed)
        if not l.startswith("ld-linux")]
ref_ok(len(libs) > 0, f"readelf -d {STE}: no NEEDED")
BASE = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}  # Priority: required, in debian:12-slim
arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
# Their paths as ldd resolves them (and the /usr/lib twin of a /lib path:
# merged /usr), owned by which package: one dpkg -S of exact paths (a glob
# pattern would scan every file list, seconds per library).
resolved = dict(re.findall(r"^\s*(\S+) => (/\S+)", subprocess.run(
    ["ldd", STE], capture_output=True, text=True).stdout, re.M))
paths = []
for lib in libs:
    p = resolved.get(lib)
    if ref_ok(p is not None, f"ldd {STE}: {lib} not found"):
        paths += [p] + (["/usr" + p] if p.startswith("/lib/") else [])
owned = subprocess.run(["dpkg", "-S"] + paths, capture_output=True, text=True).stdout.splitlines()
depended = {d.strip().split(" ")[0] for d in depends.split(",") if d.strip()}
for lib in libs:
    # "pkg:arch: path" or "pkg: path"; other architectures' copies do not count
    owners = [line.split(": ", 1)[0] for line in owned if line.endswith("/" + lib)]
    pkgs = {o.split(":")[0] for o in owners if ":" not in o or o.endswith(":" + arch)}
    pkgs = {p for p in pkgs if "-cross" not in p}
    ref_ok(pkgs & BASE or pkgs & depended,
           f"the package's Depends name none of {sorted(pkgs)} (for {lib}): {depends.strip()}")

if len(sys.argv) > 3:  # ARGV_JSON: the k8s command lines, for check_deploy.sh to run
    import json
    with open(sys.argv[3], "w") as f:
        json.dump(k8s_argv, f)

print("checked: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("deploy/ OK")
