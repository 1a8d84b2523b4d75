# The ratesim container image: ratesim alone, static, on an empty base, run
# as a user that is not root.
#
#   docker build -t ratesim .
#   docker run --rm ratesim                     # compare double-burst
#   docker run --rm ratesim demo retry-storm
#   docker run --rm -v "$PWD:/data" ratesim replay access.log --limit 10/s
#
# RATESIM_VERSION (--build-arg) is the version the binary reports; without
# it, "dev" (the build context carries no .git).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG RATESIM_VERSION=
# the one static build, which .ci/run checks by the same script
RUN RATESIM_VERSION="$RATESIM_VERSION" .ci/build-static /out/ratesim
# scratch has no directories: /tmp for the lessons' bundled traces, and
# /data, the working directory, writable by the user below
RUN mkdir -p /out/tmp /out/data && chmod 1777 /out/tmp && chown 65534:65534 /out/data

FROM scratch
COPY --from=build /out/ratesim /ratesim
COPY --from=build /out/tmp /tmp
COPY --from=build /out/data /data
# nobody's uid and gid: no passwd file needed
USER 65534:65534
WORKDIR /data
ENTRYPOINT ["/ratesim"]
CMD ["compare"]
