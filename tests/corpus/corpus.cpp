#include "tests/corpus/corpus.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <rapidjson/document.h>

namespace outbox::testing {

namespace {

const std::string corpus_dir = std::string{OUTBOX_SOURCE_DIR} + "/tests/corpus";

rapidjson::Document read_json(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str());
  if (doc.HasParseError() || !in)
    throw std::runtime_error("cannot read " + path);
  return doc;
}

std::string str(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

std::string repeated(const std::string& unit, int64_t count) {
  std::string out;
  out.reserve(unit.size() * static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out += unit;
  return out;
}

std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

std::string body_of(const rapidjson::Value& b) {
  if (b.HasMember("text"))
    return str(b["text"]);
  if (b.HasMember("hex"))
    return from_hex(str(b["hex"]));
  return str(b["head"]) + repeated(str(b["repeat"]), b["count"].GetInt64())
         + repeated(str(b["tail"]), b["tail_count"].GetInt64());
}

} // namespace

std::vector<corpus_config_file> corpus_config_files() {
  std::vector<corpus_config_file> out;
  auto doc = read_json(corpus_dir + "/config/expected.json");
  for (auto& m : doc.GetObject())
    out.push_back({corpus_dir + "/config/" + str(m.name), str(m.value)});
  return out;
}

std::vector<corpus_flag_set> corpus_flag_sets() {
  std::vector<corpus_flag_set> out;
  auto doc = read_json(corpus_dir + "/flags.json");
  for (auto& c : doc.GetArray()) {
    corpus_flag_set f;
    f.binary = str(c["bin"]);
    for (auto& a : c["args"].GetArray())
      f.args.push_back(str(a));
    f.expect = str(c["expect"]);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<corpus_message> corpus_messages() {
  std::vector<corpus_message> out;
  auto doc = read_json(corpus_dir + "/messages.json");
  for (auto& c : doc.GetArray())
    out.push_back({str(c["kind"]), str(c["name"]), body_of(c["body"]),
                   str(c["expect"])});
  return out;
}

} // namespace outbox::testing
