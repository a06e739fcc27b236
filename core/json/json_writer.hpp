// The writing half of the JSON serializer: walks a value through its
// `inspect` overload (see core/json/field.hpp) and emits JSON with RapidJSON.
// Rejects NaN, infinities and invalid UTF-8, naming the field's path.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/base/timestamp.hpp"
#include "core/json/field.hpp"
#include "core/json/json_traits.hpp"
#include "core/json/omittable.hpp"

namespace outbox {

class json_writer {
public:
  using writer_type
    = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>,
                        rapidjson::UTF8<>, rapidjson::CrtAllocator,
                        rapidjson::kWriteValidateEncodingFlag>;

  explicit json_writer(std::string root) : path_(std::move(root)), w_(sb_) {}

  /// Writes `x` as the document; false on the first bad value (see error()).
  template <class T>
  bool write_document(const T& x) {
    return write(x, path_);
  }

  /// Called by inspect overloads: writes one object with these fields.
  template <class... Ts>
  bool operator()(field_ref<Ts>... fields) {
    auto base = current_;
    if (!w_.StartObject())
      return false;
    bool ok = (write_field(base, fields) && ...);
    return ok && w_.EndObject();
  }

  std::string json() const { return sb_.GetString(); }
  const std::string& error() const { return error_; }

private:
  template <class T>
  bool write_field(const std::string& base, field_ref<T> f) {
    if (!w_.Key(f.name)) // field names are ASCII literals
      return false;
    return write(f.value, base + "." + f.name);
  }
  template <class T>
  bool write_field(const std::string& base, field_ref<omittable<T>> f) {
    return !f.value || write_field(base, field_ref<const T>{f.name, *f.value});
  }

  bool fail(const std::string& path, const std::string& rule) {
    if (error_.empty())
      error_ = path + ": " + rule;
    return false;
  }

  bool write(const std::string& x, const std::string& path) {
    if (!w_.String(x.data(), static_cast<rapidjson::SizeType>(x.size())))
      return fail(path, "is not valid UTF-8");
    return true;
  }
  bool write(bool x, const std::string&) { return w_.Bool(x); }
  bool write(time_point x, const std::string& path) {
    return write(format_timestamp(x), path);
  }

  template <class T>
  bool write(const std::optional<T>& x, const std::string& path) {
    return x ? write(*x, path) : w_.Null();
  }
  template <class T>
  bool write(const std::vector<T>& xs, const std::string& path) {
    w_.StartArray();
    for (size_t i = 0; i < xs.size(); ++i)
      if (!write(static_cast<const T&>(xs[i]), path + "[" + std::to_string(i) + "]"))
        return false;
    return w_.EndArray();
  }
  template <class T>
  bool write(const std::map<std::string, T>& xs, const std::string& path) {
    w_.StartObject();
    for (auto& [k, v] : xs) {
      auto p = path + "[\"" + k + "\"]";
      if (!w_.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())))
        return fail(path, "has a key that is not valid UTF-8");
      if (!write(v, p))
        return false;
    }
    return w_.EndObject();
  }

  template <class T>
  std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>
                     || has_inspect_v<json_writer, T>,
                   bool>
  write(const T& x, const std::string& path) {
    if constexpr (std::is_floating_point_v<T>) {
      if (!std::isfinite(x))
        return fail(path, std::isnan(x) ? "NaN is not allowed"
                                        : "infinity is not allowed");
      return w_.Double(static_cast<double>(x));
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      return w_.Int64(static_cast<int64_t>(x));
    } else if constexpr (std::is_integral_v<T>) {
      return w_.Uint64(static_cast<uint64_t>(x));
    } else if constexpr (std::is_enum_v<T>) {
      if constexpr (has_enum_strings_v<T>)
        return write(std::string{to_string(x)}, path);
      else
        return w_.Int64(static_cast<int64_t>(x));
    } else {
      auto saved = current_;
      current_ = path;
      // inspect takes a mutable reference (as in CAF); writing never mutates.
      bool ok = inspect(*this, const_cast<T&>(x));
      current_ = saved;
      return ok;
    }
  }

  std::string path_;
  std::string current_;
  std::string error_;
  rapidjson::StringBuffer sb_;
  writer_type w_;
};

} // namespace outbox
