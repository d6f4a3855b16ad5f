#!/usr/bin/env bash
# Build helm from the Go module proxy into $OFFSETGUARD_TOOLS/bin (default ~/.cache/offsetguard/tools/bin:
# outside the checkout, so fresh clones and CI on the same machine reuse it; no GitHub download needed).
# Idempotent: does nothing when that helm was built with the pinned versions (stamp file). The first
# build compiles for several minutes on 2 cores (niced); later builds reuse Go's build cache.
# Hook: `deploy/tools/install-helm.sh` in `make install`.
set -euo pipefail

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
# The Kubernetes version helm assumes without a cluster (helm template, lint): helm's own Makefile derives
# it from its k8s.io/client-go (v0.37 -> 1.37 for helm v3.22); a plain `go install` would leave 1.20.
K8S_MAJOR="${K8S_MAJOR:-1}"
K8S_MINOR="${K8S_MINOR:-37}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="${OFFSETGUARD_TOOLS:-${HOME}/.cache/offsetguard/tools}"
GOBIN="${TOOLS}/bin"
HELM="${GOBIN}/helm"
STAMP="${GOBIN}/.helm-build"
WANT="${HELM_VERSION} kubernetes ${K8S_MAJOR}.${K8S_MINOR}"

if [ -x "${HELM}" ] && [ -f "${STAMP}" ] && [ "$(cat "${STAMP}")" = "${WANT}" ]; then
    echo "helm ${WANT} already installed: ${HELM}"
    exit 0
fi
if ! command -v go >/dev/null 2>&1; then
    echo "install-helm: the Go toolchain is needed (go install from the module proxy)" >&2
    exit 1
fi

mkdir -p "${GOBIN}"
LDFLAGS="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    LDFLAGS="${LDFLAGS} -X ${pkg}.k8sVersionMajor=${K8S_MAJOR} -X ${pkg}.k8sVersionMinor=${K8S_MINOR}"
done
GOBIN="${GOBIN}" GOFLAGS="-mod=mod -buildvcs=false" nice -n 10 go install -ldflags "${LDFLAGS}" \
    "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
"${HELM}" version --template '{{.Version}}' | grep -qx "${HELM_VERSION}"
echo "${WANT}" > "${STAMP}"
echo "helm ${WANT} installed: ${HELM}"
