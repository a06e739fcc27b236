# Installs the Debian packages the build, the tests and the demo need, when
# any is missing (openssl makes the TLS tests' certificates, dpkg-dev's
# dpkg-shlibdeps the package's dependencies, chromium loads the dashboard
# in its tests). Source it, then call install_deps.

OUTBOX_PACKAGES=(g++ make cmake pkg-config libcaf-dev libpq-dev librabbitmq-dev
                 rapidjson-dev libspdlog-dev postgresql-15 postgresql-client-15
                 rabbitmq-server python3 python3-pika python3-psycopg2 openssl
                 libcpp-httplib-dev prometheus dpkg-dev chromium)

install_deps() {
  local missing=()
  for p in "${OUTBOX_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "==> installing missing packages: ${missing[*]}"
  if [ "$(id -u)" != 0 ]; then
    echo "error: not root; install them with: sudo apt-get install -y ${missing[*]}" >&2
    return 1
  fi
  # Installing a server package must not start its default instance: ours
  # run on their own ports under our own folders.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
  fi
  local rc=0
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } || rc=$?
  [ $created_policy = 1 ] && rm -f "$policy"
  return $rc
}
