# free_port: prints a TCP port on 127.0.0.1 that nothing listens on, for a
# test server to bind. Source it.
#
# It picks below the kernel's range for outgoing connections
# (ip_local_port_range): a port in that range can be taken as the local end
# of any client's connection between our check and the server's bind, or
# while a test has the server stopped. tests/support/loopback_port.cpp picks the same
# way for the C++ tests.
free_port() {
  local low=32768 high=60999 bottom=10000 top port
  read -r low high </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  top=$((low - 1))
  # A range that starts low leaves room above it instead; a range that
  # leaves room on neither side leaves any port, as before.
  if ((top - bottom < 2000)); then bottom=$((high + 1)) top=65535; fi
  if ((top - bottom < 2000)); then bottom=20000 top=65535; fi
  for _ in $(seq 1 200); do
    port=$((bottom + (RANDOM * 32768 + RANDOM) % (top - bottom + 1)))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}
