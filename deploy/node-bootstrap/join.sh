#!/usr/bin/env bash
# Joins a TPUNodeGroup VM to a self-managed (kubeadm) Kubernetes cluster.
#
# tpu-provisioner embeds this file in the instance template's `startup-script`
# metadata, so GCE runs it as root at every boot. The join credentials are not
# in the template (a template can wait days for capacity; a token lives an
# hour): the daemon sets them on the instance once it is RUNNING, and this
# script polls for them ("pull model", deploy/node-bootstrap/README.md).
#
# Reads from the GCE metadata server:
#   instance/name, instance/zone, project/project-id   → kubelet --provider-id gce://PROJECT/ZONE/NAME
#   instance/attributes/kube-labels                    → kubelet --node-labels
#   instance/attributes/kubernetes-version             → only a warning when kubeadm differs
#   instance/attributes/kubeadm-join-token             ┐
#   instance/attributes/kubeadm-control-plane-ip       ├ polled for; set by the daemon
#   instance/attributes/kubeadm-ca-hash                ┘
# Environment (defaults for a real VM; tests override them):
#   METADATA_URL        http://metadata.google.internal/computeMetadata/v1
#   JOIN_POLL_INTERVAL  5      seconds between polls (decimals allowed)
#   JOIN_DEADLINE       3600   seconds from start after which it gives up
#   JOIN_ATTEMPTS       3      kubeadm join attempts (kubeadm reset between them)
#   KUBELET_KUBECONFIG  /etc/kubernetes/kubelet.conf   present: already joined, exit 0
#   JOIN_CONFIG_DIR     /run   where the JoinConfiguration (it holds the token) lives during the join
#
# It installs nothing: the image must carry kubeadm, kubelet and a container runtime.
# The token never reaches a log, an xtrace or any process's argv: it goes from
# curl's stdout into a variable and from there, by the printf builtin, into a
# 0600 JoinConfiguration file that kubeadm reads (`kubeadm join --config`) and
# that is removed afterwards.
set -euo pipefail
set +x # even if the caller traces (SHELLOPTS=xtrace): the token passes through variables

METADATA_URL="${METADATA_URL:-http://metadata.google.internal/computeMetadata/v1}"
POLL_INTERVAL="${JOIN_POLL_INTERVAL:-5}"
DEADLINE="${JOIN_DEADLINE:-3600}"
ATTEMPTS="${JOIN_ATTEMPTS:-3}"
KUBELET_KUBECONFIG="${KUBELET_KUBECONFIG:-/etc/kubernetes/kubelet.conf}"
CONFIG_DIR="${JOIN_CONFIG_DIR:-/run}" # tmpfs on systemd hosts: the token never reaches a disk

log() { printf 'node-bootstrap: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# Microseconds since the epoch; EPOCHREALTIME (bash 5) avoids a fork per poll.
now_us() {
  local t="${EPOCHREALTIME:-}"
  if [[ -n $t ]]; then
    printf '%s' "${t/[.,]/}"
  else
    date +%s%6N
  fi
}

# "1.5" → 1500000: seconds (decimals allowed) as microseconds, in bash arithmetic.
seconds_to_us() {
  local whole frac
  [[ $1 =~ ^([0-9]+)(\.([0-9]{1,6}))?$ ]] || return 1
  whole="${BASH_REMATCH[1]}"
  frac="${BASH_REMATCH[3]}000000"
  printf '%s' $((10#$whole * 1000000 + 10#${frac:0:6}))
}

past_deadline() { (($(now_us) >= deadline_us)); }

# metadata PATH: prints the value at PATH (relative to METADATA_URL). Returns 0
# when it is set, 1 when it is absent (404: the daemon has not set it yet), 2
# when the server did not answer. The Metadata-Flavor header is what the real
# server requires; no proxy may stand between a VM and its metadata server.
metadata() {
  local out code
  out="$(curl --silent --noproxy '*' --connect-timeout 2 --max-time 10 \
    -H 'Metadata-Flavor: Google' --write-out '\n%{http_code}' "${METADATA_URL}/$1")" || return 2
  code="${out##*$'\n'}"
  out="${out%$'\n'*}"
  case "$code" in
  200) printf '%s' "$out" ;;
  404) return 1 ;;
  *) return 2 ;;
  esac
}

# wait_for PATH [optional]: polls PATH until it has a value (printed) or the
# deadline passes (returns 1). With "optional", an absent or empty key prints
# nothing: only a server that does not answer is waited for.
wait_for() {
  local path="$1" optional="${2:-}" value rc
  while :; do
    rc=0
    value="$(metadata "$path")" || rc=$?
    if ((rc == 0)) && [[ -n $value || -n $optional ]]; then
      printf '%s' "$value"
      return 0
    fi
    if ((rc == 1)) && [[ -n $optional ]]; then return 0; fi
    past_deadline && return 1
    sleep "$POLL_INTERVAL"
  done
}

# The API server endpoint as kubeadm wants it, host:port; 6443 (kubeadm's
# default) when the value is a bare host. Fails on anything else.
normalize_endpoint() {
  local v="$1"
  if [[ $v =~ ^[A-Za-z0-9.-]+:[0-9]{1,5}$ || $v =~ ^\[[0-9A-Fa-f:.]+\]:[0-9]{1,5}$ ]]; then
    printf '%s' "$v"
  elif [[ $v =~ ^[A-Za-z0-9.-]+$ || $v =~ ^\[[0-9A-Fa-f:.]+\]$ ]]; then
    printf '%s:6443' "$v"
  elif [[ $v =~ ^[0-9A-Fa-f:.]+$ ]]; then
    printf '[%s]:6443' "$v" # a bare IPv6 address
  else
    return 1
  fi
}

# Checks kube-labels (k=v,k=v) against Kubernetes' label syntax: the value
# goes into a YAML file and onto the kubelet's command line.
valid_labels() {
  local pair key value
  local -a pairs
  [[ -z $1 ]] && return 0
  IFS=',' read -r -a pairs <<<"$1"
  for pair in "${pairs[@]}"; do
    [[ $pair == *=* ]] || return 1
    key="${pair%%=*}"
    value="${pair#*=}"
    [[ $key =~ ^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$ ]] || return 1
    [[ $value =~ ^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$ ]] || return 1
  done
}

# The JoinConfiguration API to write: v1beta4 from kubeadm 1.31 on (which
# deprecated v1beta3; kubeletExtraArgs became a list of name/value), v1beta3
# for 1.29 and 1.30, which know no v1beta4 (kubeletExtraArgs is a map there).
# An unknown version gets v1beta4: newer kubeadms are the ones that drop APIs.
join_config_api() {
  local v
  v="$(kubeadm version -o short 2>/dev/null)" || v=""
  if [[ $v =~ ^v?1\.([0-9]+)\. ]] && ((BASH_REMATCH[1] < 31)); then
    printf 'v1beta3'
  else
    printf 'v1beta4'
  fi
}

# Writes the JoinConfiguration to stdout. Every value was checked against a
# pattern without quotes or backslashes, so double-quoting is enough YAML.
# printf is a builtin: the token is in no process's argv.
write_join_config() {
  local api="$1"
  printf 'apiVersion: kubeadm.k8s.io/%s\nkind: JoinConfiguration\n' "$api"
  printf 'discovery:\n  bootstrapToken:\n'
  printf '    apiServerEndpoint: "%s"\n' "$endpoint"
  printf '    token: "%s"\n' "$token"
  printf '    caCertHashes:\n    - "%s"\n' "$ca_hash"
  printf 'nodeRegistration:\n  name: "%s"\n  kubeletExtraArgs:\n' "$name"
  # The kubelet flags, through kubeadm: it writes them to
  # /var/lib/kubelet/kubeadm-flags.env, which its kubelet drop-in reads.
  if [[ $api == v1beta3 ]]; then
    printf '    provider-id: "%s"\n' "$provider_id"
    [[ -n $labels ]] && printf '    node-labels: "%s"\n' "$labels"
  else
    printf '  - name: provider-id\n    value: "%s"\n' "$provider_id"
    [[ -n $labels ]] && printf '  - name: node-labels\n    value: "%s"\n' "$labels"
  fi
  return 0
}

# Polls until the daemon has set all three join keys, each well-formed. The
# values land in the globals token, endpoint and ca_hash.
wait_for_credentials() {
  local t cp h rc_t rc_cp rc_h said=""
  while :; do
    rc_t=0 rc_cp=0 rc_h=0
    t="$(metadata instance/attributes/kubeadm-join-token)" || rc_t=$?
    cp="$(metadata instance/attributes/kubeadm-control-plane-ip)" || rc_cp=$?
    h="$(metadata instance/attributes/kubeadm-ca-hash)" || rc_h=$?
    if ((rc_t == 0 && rc_cp == 0 && rc_h == 0)); then
      h="${h,,}"
      [[ $h =~ ^[0-9a-f]{64}$ ]] && h="sha256:$h"
      if ! [[ $t =~ ^[a-z0-9]{6}\.[a-z0-9]{16}$ ]]; then
        # Never the value: a token one character off is still a secret.
        [[ $said == token ]] || log "kubeadm-join-token is malformed (want [a-z0-9]{6}.[a-z0-9]{16}); waiting for a new one"
        said="token"
      elif ! cp="$(normalize_endpoint "$cp")"; then
        [[ $said == endpoint ]] || log "kubeadm-control-plane-ip is not host[:port]; waiting for a new one"
        said="endpoint"
      elif ! [[ $h =~ ^sha256:[0-9a-f]{64}$ ]]; then
        [[ $said == hash ]] || log "kubeadm-ca-hash is not sha256:<64 hex>; waiting for a new one"
        said="hash"
      else
        token="$t" endpoint="$cp" ca_hash="$h"
        return 0
      fi
    elif [[ -z $said ]]; then
      log "waiting for kubeadm-join-token, kubeadm-control-plane-ip and kubeadm-ca-hash (set by tpu-provisioner once this VM is RUNNING)"
      said="waiting"
    fi
    past_deadline && return 1
    sleep "$POLL_INTERVAL"
  done
}

main() {
  local start_us attempt=0 rc
  seconds_to_us "$POLL_INTERVAL" >/dev/null || die "JOIN_POLL_INTERVAL is not a number of seconds: $POLL_INTERVAL"
  [[ $ATTEMPTS =~ ^[1-9][0-9]*$ ]] || die "JOIN_ATTEMPTS is not a positive integer: $ATTEMPTS"
  start_us="$(now_us)"
  deadline_us="$(seconds_to_us "$DEADLINE")" || die "JOIN_DEADLINE is not a number of seconds: $DEADLINE"
  deadline_us=$((start_us + deadline_us))

  # A reboot of a joined node: the kubelet already has its credentials.
  if [[ -e $KUBELET_KUBECONFIG ]]; then
    log "$KUBELET_KUBECONFIG exists: this node already joined; nothing to do"
    exit 0
  fi
  command -v kubeadm >/dev/null 2>&1 ||
    die "kubeadm is not on PATH ($PATH); this script installs nothing: the VM image must carry kubeadm, kubelet and a container runtime (deploy/node-bootstrap/README.md)"

  # The metadata server may not answer during the first seconds of boot.
  name="$(wait_for instance/name)" || die "no instance name from $METADATA_URL before the deadline (${DEADLINE}s)"
  zone="$(wait_for instance/zone)" || die "no instance zone from $METADATA_URL before the deadline"
  zone="${zone##*/}" # projects/NUMBER/zones/ZONE
  project="$(wait_for project/project-id)" || die "no project id from $METADATA_URL before the deadline"
  [[ "$project/$zone/$name" =~ ^[A-Za-z0-9.:-]+/[a-z0-9-]+/[a-z0-9-]+$ ]] ||
    die "unexpected project, zone or instance name: $project/$zone/$name"
  provider_id="gce://$project/$zone/$name"
  labels="$(wait_for instance/attributes/kube-labels optional)" ||
    die "no answer for kube-labels from $METADATA_URL before the deadline"
  valid_labels "$labels" || die "kube-labels is not a list of k=v Kubernetes labels: $labels"
  [[ -n $labels ]] || log "warning: no kube-labels: the node will lack its TPU labels"

  local want have
  want="$(wait_for instance/attributes/kubernetes-version optional)" || want=""
  have="$(kubeadm version -o short 2>/dev/null)" || have=""
  if [[ -n $want && ${have#v} != "$want" && ${have#v} != "$want".* ]]; then
    log "warning: the template asks for Kubernetes $want, kubeadm is ${have:-of unknown version}"
  fi
  log "provider id $provider_id, labels ${labels:-(none)}"

  while :; do
    attempt=$((attempt + 1))
    wait_for_credentials ||
      die "kubeadm-join-token, kubeadm-control-plane-ip and kubeadm-ca-hash not all set (well-formed) within ${DEADLINE}s; is tpu-provisioner running with bootstrapKubernetes for this group?"
    config="$(umask 077 && mktemp "$CONFIG_DIR/kubeadm-join.XXXXXX")"
    # Removed on every exit, also when a signal ends the script (config is a
    # global: the EXIT trap runs after main has returned).
    trap 'rm -f -- "$config"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    write_join_config "$(join_config_api)" >"$config"
    log "joining $endpoint (attempt $attempt of $ATTEMPTS)"
    rc=0
    kubeadm join --config "$config" || rc=$?
    rm -f -- "$config"
    if ((rc == 0)); then
      log "joined the cluster at $endpoint as $name"
      return 0
    fi
    ((attempt < ATTEMPTS)) || die "kubeadm join failed $attempt times (last exit $rc)"
    past_deadline && die "kubeadm join failed (exit $rc) and the deadline (${DEADLINE}s) has passed"
    # A failed join can leave files behind that fail the next one's preflight.
    log "kubeadm join failed (exit $rc); resetting before the next attempt"
    kubeadm reset --force >&2 || log "warning: kubeadm reset failed"
    sleep "$POLL_INTERVAL"
  done
}

main "$@"
