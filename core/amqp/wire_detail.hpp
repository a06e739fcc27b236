// What the job and the result message share on the JSON side: the ids,
// the job field, the bounded parse and the writer. Internal to core/amqp,
// included only by wire.cpp, wire_job.cpp and wire_result.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace outbox::wire_detail {

using json_writer_t = rapidjson::Writer<rapidjson::StringBuffer>;

std::optional<int64_t> read_id(const rapidjson::Value& v);

void write_string(json_writer_t& w, const std::string& s);

std::optional<std::string> read_job(const rapidjson::Value& obj,
                                    std::string& out);

std::optional<std::string> parse_message(const std::string& body,
                                         rapidjson::Document& doc);

} // namespace outbox::wire_detail
