# syntax=docker/dockerfile:1
# One agent per container: `headroom run` is PID 1, drives the Chromium
# beside it, and exits with the task's code (0 succeeded, 1 failed, 2 bad
# task or config, 3 no budget in time, 4 browser failure, 130 stopped).
#
#   docker build -t headroom .
#   docker run --rm --read-only --tmpfs /tmp -v "$PWD/out:/out" \
#     -v "$PWD/fleet:/etc/headroom:ro" -e HEADROOM_CONFIG=/etc/headroom/headroom.yaml \
#     -e AZURE_OPENAI_KEY_EASTUS -e JOB_COMPLETION_INDEX=0 headroom
#
# No init is needed: headroom reaps Chrome's helpers itself (as PID 1 it
# is their parent once Chrome exits; elsewhere it makes itself their
# subreaper), and handles SIGTERM: it stops the task, closes Chrome and
# writes its result within about ten seconds.

ARG GO_VERSION=1.26
ARG DEBIAN=bookworm

FROM golang:${GO_VERSION}-${DEBIAN} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# VERSION is what make image passes (scripts/version); without it the
# version comes from the VCS information the build stamps, else
# cmd/headroom/VERSION. A static binary needs nothing of the runtime image
# but Chrome.
ARG VERSION=
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=auto -ldflags="-s -w -X main.version=${VERSION}" -o /out/headroom ./cmd/headroom

FROM debian:${DEBIAN}-slim
# Chromium and fonts from Debian's packages, so pages render as on the
# machines the HAR files were recorded on.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation fonts-noto-core fonts-dejavu-core ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# A user of its own, with no home but /tmp: the root file system can be
# mounted read-only, with /tmp and /out the only places written.
RUN useradd --uid 10001 --user-group --no-create-home --home-dir /tmp --shell /usr/sbin/nologin headroom \
 && mkdir -p /out && chown headroom:headroom /out
COPY --from=build /out/headroom /usr/local/bin/headroom
USER 10001:10001
WORKDIR /tmp
# HEADROOM_NO_SANDBOX: the default seccomp profiles of Docker, Kubernetes
# and ECS refuse the user namespaces Chrome's own sandbox needs; the
# container (non-root, read-only, no capabilities, fenced network) is the
# sandbox. Unset it where the profile allows them.
ENV HOME=/tmp TMPDIR=/tmp CHROME_PATH=/usr/bin/chromium HEADROOM_NO_SANDBOX=1
VOLUME ["/tmp", "/out"]
# The config (HEADROOM_CONFIG), the keys it names (api_key_env), the
# Redis URL (redis_env) and the task index (JOB_COMPLETION_INDEX or
# HEADROOM_TASK_INDEX) all come from the environment; nothing secret is
# in the image.
ENTRYPOINT ["/usr/local/bin/headroom"]
CMD ["run", "--tasks", "/etc/headroom/tasks/tasks.yaml", "--out", "/out"]
