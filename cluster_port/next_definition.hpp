#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace outbox::cluster_port {

/// The definition of `name` after this executable's own (the C library's,
/// OpenSSL's, or a sanitizer's wrapper of them): what an interposed call
/// calls on to. Aborts when there is none, as nothing could work then.
template <class Fn>
Fn next_definition(const char* name) {
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  if (fn == nullptr) {
    std::fprintf(stderr, "fatal: no definition of %s after outbox's own\n", name);
    std::abort();
  }
  return fn;
}

} // namespace outbox::cluster_port
