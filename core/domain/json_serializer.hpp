// The default serializer: an event type described by `inspect` (see
// core/json/field.hpp) to and from a JSON payload. A serializer is any class with
// this shape (content_type, serialize<T>, deserialize<T>); make_event and
// read_event take it as a template parameter, so another can be plugged in.
#pragma once

#include <string>

#include <caf/expected.hpp>
#include <rapidjson/document.h>

#include "core/base/errors.hpp"
#include "core/domain/event.hpp"
#include "core/json/json_parse.hpp"
#include "core/json/json_reader.hpp"
#include "core/json/json_writer.hpp"

namespace outbox {

struct json_serializer {
  static const char* content_type() { return "application/json"; }

  /// Serializes `x`; errc::serialize_failed names the bad field's path.
  template <class T>
  static caf::expected<std::string> serialize(const T& x) {
    json_writer w{"payload"};
    if (!w.write_document(x))
      return make_error(errc::serialize_failed, w.error());
    return w.json();
  }

  /// Reads a `T` back; errc::deserialize_failed names the path.
  template <class T>
  static caf::expected<T> deserialize(const std::string& payload) {
    // Iterative: a payload nested a million deep must not overflow the
    // stack (the reader below walks only as deep as T's own fields).
    rapidjson::Document doc;
    if (auto why = parse_json(payload, payload_json_limits, doc))
      return make_error(errc::deserialize_failed, "payload: " + *why);
    T x{};
    json_reader r{"payload"};
    if (!r.read_document(doc, x))
      return make_error(errc::deserialize_failed, r.error());
    return x;
  }
};

/// Builds an event of `T::event_type` with the serialized payload.
template <class Serializer = json_serializer, class T>
caf::expected<event> make_event(const T& x) {
  auto payload = Serializer::serialize(x);
  if (!payload)
    return payload.error();
  event ev;
  ev.event_type = T::event_type;
  ev.payload = std::move(*payload);
  ev.content_type = Serializer::content_type();
  return ev;
}

/// Reads the payload of an event of type `T`; checks the event type.
template <class T, class Serializer = json_serializer>
caf::expected<T> read_event(const std::string& event_type,
                            const std::string& payload) {
  if (event_type != T::event_type)
    return make_error(errc::deserialize_failed,
                      "event type \"" + event_type + "\" is not \""
                        + T::event_type + "\"");
  return Serializer::template deserialize<T>(payload);
}

} // namespace outbox
