// The reading half of the JSON serializer: fills a value from a parsed
// RapidJSON document through the same `inspect` overload that wrote it.
// Missing non-optional fields and wrong types are errors naming the path;
// fields the type does not list are ignored, so producers may add fields.
#pragma once

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <rapidjson/document.h>

#include "core/base/timestamp.hpp"
#include "core/json/field.hpp"
#include "core/json/json_traits.hpp"
#include "core/json/omittable.hpp"

namespace outbox {

class json_reader {
public:
  explicit json_reader(std::string root) : path_(std::move(root)) {}

  /// Reads `x` from `doc`; false on the first problem (see error()).
  template <class T>
  bool read_document(const rapidjson::Value& doc, T& x) {
    return read(doc, x, path_);
  }

  /// Called by inspect overloads: reads these fields of the current object.
  template <class... Ts>
  bool operator()(field_ref<Ts>... fields) {
    auto* obj = current_;
    auto base = current_path_;
    if (!obj->IsObject())
      return fail(base, "expected an object");
    return (read_field(*obj, base, fields) && ...);
  }

  const std::string& error() const { return error_; }

private:
  template <class T>
  bool read_field(const rapidjson::Value& obj, const std::string& base,
                  field_ref<T> f) {
    auto path = base + "." + f.name;
    auto it = obj.FindMember(f.name);
    if (it == obj.MemberEnd()) {
      if constexpr (is_optional<T>::value) {
        f.value.reset();
        return true;
      }
      return fail(path, "is missing");
    }
    return read(it->value, f.value, path);
  }

  template <class T>
  struct is_optional : std::false_type {};
  template <class T>
  struct is_optional<std::optional<T>> : std::true_type {};
  template <class T>
  struct is_optional<omittable<T>> : std::true_type {};

  bool fail(const std::string& path, const std::string& rule) {
    if (error_.empty())
      error_ = path + ": " + rule;
    return false;
  }

  bool read(const rapidjson::Value& v, std::string& x, const std::string& path) {
    if (!v.IsString())
      return fail(path, "expected a string");
    x.assign(v.GetString(), v.GetStringLength());
    return true;
  }
  bool read(const rapidjson::Value& v, bool& x, const std::string& path) {
    if (!v.IsBool())
      return fail(path, "expected true or false");
    x = v.GetBool();
    return true;
  }
  bool read(const rapidjson::Value& v, time_point& x, const std::string& path) {
    std::optional<time_point> t;
    if (v.IsString())
      t = parse_timestamp(v.GetString());
    if (!t)
      return fail(path, "expected an ISO 8601 UTC timestamp");
    x = *t;
    return true;
  }
  template <class T>
  bool read(const rapidjson::Value& v, std::optional<T>& x,
            const std::string& path) {
    if (v.IsNull()) {
      x.reset();
      return true;
    }
    T tmp{};
    if (!read(v, tmp, path))
      return false;
    x = std::move(tmp);
    return true;
  }
  template <class T>
  bool read(const rapidjson::Value& v, std::vector<T>& xs,
            const std::string& path) {
    if (!v.IsArray())
      return fail(path, "expected a list");
    xs.clear();
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      T tmp{};
      if (!read(v[i], tmp, path + "[" + std::to_string(i) + "]"))
        return false;
      xs.push_back(std::move(tmp));
    }
    return true;
  }
  template <class T>
  bool read(const rapidjson::Value& v, std::map<std::string, T>& xs,
            const std::string& path) {
    if (!v.IsObject())
      return fail(path, "expected an object");
    xs.clear();
    for (auto& m : v.GetObject()) {
      std::string key{m.name.GetString(), m.name.GetStringLength()};
      T tmp{};
      if (!read(m.value, tmp, path + "[\"" + key + "\"]"))
        return false;
      xs.emplace(std::move(key), std::move(tmp));
    }
    return true;
  }

  template <class T>
  std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>
                     || has_inspect_v<json_reader, T>,
                   bool>
  read(const rapidjson::Value& v, T& x, const std::string& path) {
    if constexpr (std::is_floating_point_v<T>) {
      if (!v.IsNumber())
        return fail(path, "expected a number");
      x = static_cast<T>(v.GetDouble());
      return true;
    } else if constexpr (std::is_integral_v<T>) {
      return read_integer(v, x, path);
    } else if constexpr (std::is_enum_v<T>) {
      if constexpr (has_enum_strings_v<T>) {
        if (!v.IsString() || !from_string(std::string{v.GetString()}, x))
          return fail(path, "expected one of the enum's names");
        return true;
      } else {
        std::underlying_type_t<T> n{};
        if (!read_integer(v, n, path))
          return false;
        x = static_cast<T>(n);
        return true;
      }
    } else {
      auto* saved = current_;
      auto saved_path = current_path_;
      current_ = &v;
      current_path_ = path;
      bool ok = inspect(*this, x);
      current_ = saved;
      current_path_ = saved_path;
      return ok;
    }
  }

  template <class T>
  bool read_integer(const rapidjson::Value& v, T& x, const std::string& path) {
    if constexpr (std::is_signed_v<T>) {
      if (!v.IsInt64() || v.GetInt64() < std::numeric_limits<T>::min()
          || v.GetInt64() > std::numeric_limits<T>::max())
        return fail(path, "expected an integer that fits its type");
      x = static_cast<T>(v.GetInt64());
    } else {
      if (!v.IsUint64() || v.GetUint64() > std::numeric_limits<T>::max())
        return fail(path, "expected a non-negative integer that fits its type");
      x = static_cast<T>(v.GetUint64());
    }
    return true;
  }

  std::string path_;
  const rapidjson::Value* current_ = nullptr;
  std::string current_path_;
  std::string error_;
};

} // namespace outbox
