#!/usr/bin/env bash
# Checks what the build, the tests, the plots and the grader need, before anything is built.
# As root on Debian/Ubuntu it installs what is missing with apt-get (the way CI does); otherwise
# it stops at once and prints the exact command to run. Sourced by tools/test.sh and
# tools/grade-example.sh (tools/plot.sh takes its Python search); it also puts /usr/local/cuda/bin
# on PATH when nvcc is only there.
#   bash tools/bootstrap.sh            # check (and install as root), exit 0 when ready
#   bash tools/bootstrap.sh browser    # also chromium, chromium-driver, python3-selenium (the ci workflow's browser test)

# The Python 3 the build uses for the plots: REDUCTION_PYTHON when set (it must import matplotlib),
# else the first of python3 on PATH, /usr/bin/python3 and /usr/local/bin/python3 that imports
# matplotlib: the search of common/cmake/FindPythonWithMatplotlib.cmake. Prints its path; returns 1
# when there is none.
reduction_python_with_matplotlib() {
  local candidates=("$(command -v python3 || true)" /usr/bin/python3 /usr/local/bin/python3) candidate
  [ -z "${REDUCTION_PYTHON:-}" ] || candidates=("$(command -v "$REDUCTION_PYTHON" || true)")
  for candidate in "${candidates[@]}"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c "import matplotlib" 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# Runs COMMAND (a shell function too) holding this machine's lock for the project's apt-get runs
# (flock on REDUCTION_APT_LOCK, default /run/reduction-labs-apt.lock), so that two of them (CTest's
# ci.student_run and grader.slurm side by side) wait for each other instead of one failing on
# apt's own lock; the other apt users of the machine are waited for by DPkg::Lock::Timeout. Without
# flock, or where the lock cannot be opened (not root), COMMAND runs without it.
reduction_apt_locked() {
  local lock=${REDUCTION_APT_LOCK:-/run/reduction-labs-apt.lock} fd status=0
  if command -v flock >/dev/null && { exec {fd}>>"$lock"; } 2>/dev/null; then
    flock -w 1800 "$fd" || echo "bootstrap: waited 30 minutes for $lock; going on without it" >&2
    "$@" || status=$?
    exec {fd}>&-
    return $status
  fi
  "$@"
}

reduction_apt_install() {   # apt-get update, then install PACKAGES...
  apt-get update -qq -o DPkg::Lock::Timeout=600 &&
    apt-get install -y -qq -o DPkg::Lock::Timeout=600 "$@" >/dev/null
}

reduction_bootstrap() {
  local missing=() problems=()
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH=/usr/local/cuda/bin:$PATH
  fi
  command -v nvcc >/dev/null ||
    problems+=("nvcc not found: install the CUDA Toolkit 12.x or 13.x (https://developer.nvidia.com/cuda-downloads) and put its bin/ on PATH")
  if ! command -v cmake >/dev/null; then
    missing+=(cmake)
  else
    local version
    version=$(cmake --version | awk 'NR == 1 {print $3}')
    printf '3.25\n%s\n' "$version" | sort -V -C ||
      problems+=("CMake $version is too old: 3.25 or newer is needed (https://cmake.org/download/)")
  fi
  command -v ninja >/dev/null || missing+=(ninja-build)
  # GoogleTest: the distribution's package, one installed under /usr/local, or one CMake is
  # pointed at with GTest_DIR / GTEST_ROOT.
  [ -f /usr/include/gtest/gtest.h ] || [ -f /usr/local/include/gtest/gtest.h ] ||
    [ -n "${GTest_DIR:-}${GTEST_ROOT:-}" ] || missing+=(libgtest-dev)
  # The plots need matplotlib; Debian's python3-matplotlib installs for /usr/bin/python3, which
  # the build finds even when another python3 comes first on PATH.
  REDUCTION_PYTHON= reduction_python_with_matplotlib >/dev/null || missing+=(python3-matplotlib)
  command -v bwrap >/dev/null || missing+=(bubblewrap)   # the grader's sandbox for student code
  # and its seccomp filter, built with libseccomp.so.2 (apt depends on it: a bare image may lack it)
  ldconfig -p 2>/dev/null | grep -q 'libseccomp[.]so[.]2 ' || missing+=(libseccomp2)
  # `reduction_bootstrap browser` (the ci workflow): the class report's browser test drives Debian's
  # chromium through Selenium. Installed as root; otherwise that test is skipped, saying why.
  local optional=()
  if [ "${1:-}" = browser ]; then
    [ -x /usr/bin/chromium ] || optional+=(chromium)
    [ -x /usr/bin/chromedriver ] || optional+=(chromium-driver)
    /usr/bin/python3 -c "import selenium" 2>/dev/null || optional+=(python3-selenium)
    if [ ${#optional[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      missing+=("${optional[@]}")
    elif [ ${#optional[@]} -gt 0 ]; then
      echo "bootstrap: the class report's browser test will be skipped: install ${optional[*]} (apt-get) to run it"
    fi
  fi

  if [ ${#problems[@]} -gt 0 ]; then
    printf 'bootstrap: %s\n' "${problems[@]}" >&2
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "bootstrap: installing ${missing[*]} (apt-get)"
      export DEBIAN_FRONTEND=noninteractive
      if ! reduction_apt_locked reduction_apt_install "${missing[@]}"; then
        echo "bootstrap: apt-get could not install ${missing[*]}; install them and run this again" >&2
        return 1
      fi
    else
      echo "bootstrap: missing ${missing[*]}. Install them first (Debian 12 / Ubuntu 24.04):" >&2
      echo "    sudo apt-get install -y ${missing[*]}" >&2
      return 1
    fi
  fi
  [ ${#problems[@]} -eq 0 ]
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  reduction_bootstrap "$@"
  echo "bootstrap: everything the build needs is here"
fi
