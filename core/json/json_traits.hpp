// Compile-time checks the JSON inspectors use to pick an encoding.
#pragma once

#include <string>
#include <type_traits>

namespace outbox {

/// True when `inspect(Inspector&, T&)` is found by ADL.
template <class Inspector, class T, class = void>
struct has_inspect : std::false_type {};

template <class Inspector, class T>
struct has_inspect<Inspector, T,
                   std::void_t<decltype(inspect(std::declval<Inspector&>(),
                                                std::declval<T&>()))>>
  : std::true_type {};

template <class Inspector, class T>
constexpr bool has_inspect_v = has_inspect<Inspector, T>::value;

/// True for enums with ADL `to_string(E)` and `from_string(const
/// std::string&, E&) -> bool`: those travel as strings, other enums as their
/// integer value.
template <class E, class = void>
struct has_enum_strings : std::false_type {};

template <class E>
struct has_enum_strings<
  E, std::void_t<decltype(to_string(std::declval<E>())),
                 decltype(from_string(std::declval<const std::string&>(),
                                      std::declval<E&>()))>>
  : std::true_type {};

template <class E>
constexpr bool has_enum_strings_v = has_enum_strings<E>::value;

} // namespace outbox
