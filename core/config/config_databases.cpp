// One cluster, many databases: each entry of `databases` is read as if it
// were a whole file of one database, made of the top level's keys with the
// entry's own keys in their place; its problems are then told where they
// were written.
#include "core/config/config_databases.hpp"

#include <algorithm>
#include <set>

#include "core/domain/dispatch_tag.hpp"

namespace outbox {
namespace config_detail {

namespace {

constexpr size_t max_database_name = 32;
/// A node's join names at most this many (actors/join_rules.hpp).
constexpr size_t max_databases = 256;

// The broker is the cluster's: a queue that two databases route to is one
// queue, on one broker.
constexpr const char* cluster_keys[] = {"amqpUrl", "amqpUrlFile"};

// True when `line` is a problem of `key` or of something under it: the
// path starts with the key, then ends or goes on with `.`, `[`, ` ` or `:`.
bool about_key(const std::string& line, const std::string& key) {
  if (line.compare(0, key.size(), key) != 0)
    return false;
  if (line.size() == key.size())
    return true;
  auto next = line[key.size()];
  return next == '.' || next == '[' || next == ' ' || next == ':' || next == '/';
}

bool about_any_key(const std::string& line, const json& obj) {
  for (auto& m : obj.GetObject())
    if (about_key(line, {m.name.GetString(), m.name.GetStringLength()}))
      return true;
  return false;
}

// An entry's URL file replaces a default inline URL and the other way
// round: the two are one setting.
bool replaced_by(const rapidjson::Value::StringRefType& key, const json& entry) {
  std::string k{key.s, key.length};
  auto other = k == "databaseUrl" ? "databaseUrlFile"
               : k == "databaseUrlFile" ? "databaseUrl" : "";
  return *other && entry.HasMember(other);
}

// The entry's keys in place of the top level's (but for `databases`).
void merge_entry(const json& top, const json& entry, rapidjson::Document& out) {
  auto& alloc = out.GetAllocator();
  out.SetObject();
  for (auto& m : top.GetObject()) {
    if (m.name == "databases"
        || replaced_by({m.name.GetString(), m.name.GetStringLength()}, entry))
      continue;
    out.AddMember(json{m.name, alloc}, json{m.value, alloc}, alloc);
  }
  for (auto& m : entry.GetObject()) {
    if (auto it = out.FindMember(m.name); it != out.MemberEnd())
      it->value.CopyFrom(m.value, alloc);
    else
      out.AddMember(json{m.name, alloc}, json{m.value, alloc}, alloc);
  }
}

// An entry's own rules: an object, with no key given twice (the merge
// keeps one) and none of the cluster's.
bool check_entry(const json& entry, const std::string& path, problems& errs) {
  if (!entry.IsObject()) {
    errs.add(path, entry, "must be an object of this database's settings");
    return false;
  }
  bool ok = true;
  std::set<std::string> seen;
  for (auto& m : entry.GetObject()) {
    std::string key{m.name.GetString(), m.name.GetStringLength()};
    if (!seen.insert(key).second) {
      errs.add(path + "." + key, "given more than once");
      ok = false;
    }
    for (auto* cluster_key : cluster_keys)
      if (key == cluster_key) {
        errs.add(path + "." + key,
                 "the broker is the cluster's: give it at the top level");
        ok = false;
      }
  }
  return ok;
}

// Moves one database's problems to where they were written: a key of the
// entry, or one missing from both, under the entry's path; a default's at
// the top level, once for all databases.
void place_problems(const problems& found, const json& top, const json& entry,
                    const std::string& path, std::set<std::string>& told,
                    problems& errs) {
  for (auto& line : found.lines()) {
    bool from_default = !about_any_key(line, entry)
                        && (about_any_key(line, top) || line.rfind("OUTBOX_", 0) == 0);
    if (!from_default)
      errs.add_line(path + "." + line);
    else if (told.insert(line).second)
      errs.add_line(line);
  }
}

// Two entries on one database must keep apart: each of their tables and
// their publish function differ (the ready channel is the deliveries
// table's).
void check_apart(const std::vector<config>& dbs, problems& errs) {
  if (dbs.size() > max_databases)
    errs.add("databases", "names " + std::to_string(dbs.size())
                            + " databases; a cluster serves at most "
                            + std::to_string(max_databases));
  for (size_t i = 0; i < dbs.size(); ++i)
    for (size_t j = i + 1; j < dbs.size(); ++j) {
      if (dbs[i].database_url != dbs[j].database_url)
        continue;
      auto& a = dbs[i].names;
      auto& b = dbs[j].names;
      for (auto [key, same] :
           {std::pair{"eventsTableName", a.events == b.events},
            std::pair{"deliveriesTableName", a.deliveries == b.deliveries},
            std::pair{"migrationsTableName", a.migrations == b.migrations},
            std::pair{"publishFunctionName",
                      a.publish_function == b.publish_function}})
        if (same)
          errs.add("databases." + dbs[j].database,
                   std::string{"the same database and "} + key + " as databases."
                     + dbs[i].database
                     + " (two outboxes in one database need their own tables "
                       "and function): give it its own databaseUrl or " + key);
    }
  // A queue that two databases route to is one queue of the broker: of one
  // type.
  for (size_t i = 0; i < dbs.size(); ++i)
    for (size_t j = i + 1; j < dbs.size(); ++j)
      for (auto& [queue, type] : dbs[j].queue_types) {
        auto other = dbs[i].queue_types.find(queue);
        if (other != dbs[i].queue_types.end() && other->second != type)
          errs.add("databases." + dbs[j].database,
                   "queue \"" + queue + "\" has another queueType than in "
                     "databases." + dbs[i].database + " (a queue has one type)");
      }
  // A queue of several databases has a queue of parked results per
  // database (<queue>.results.<database>): an AMQP name of 255 bytes at most.
  if (dbs.size() > 1)
    for (auto& db : dbs)
      for (auto& q : db.queues())
        if (q.size() + std::string{".results."}.size() + db.database.size() > 255)
          errs.add("databases." + db.database,
                   "queue \"" + q.substr(0, 40) + "...\" leaves no room for the "
                   "name of its parked results (queue, \".results.\" and the "
                   "database name in 255 bytes)");
  // A result finds its database by the tag its dispatch id starts with.
  for (size_t i = 0; i < dbs.size(); ++i)
    for (size_t j = i + 1; j < dbs.size(); ++j)
      if (dbs[i].names.dispatch_tag == dbs[j].names.dispatch_tag)
        errs.add("databases." + dbs[j].database,
                 "its dispatch tag is that of databases." + dbs[i].database
                   + " (a 32-bit hash of the name): rename one");
}

} // namespace

std::string check_database_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= max_database_name
            && std::all_of(name.begin(), name.end(), [](char c) {
                 return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                        || c == '_';
               });
  return ok ? "" : "a name is 1 to 32 of a-z, 0-9 and _";
}

void read_databases(const json& doc, env_lookup env, problems& errs,
                    std::vector<config>& out) {
  auto& dbs = doc["databases"];
  if (!dbs.IsObject() || dbs.MemberCount() == 0) {
    errs.add("databases", dbs,
             "must be a non-empty object of database name -> settings");
    return;
  }
  if (!env("OUTBOX_DATABASE_URL").empty())
    errs.add("OUTBOX_DATABASE_URL",
             "applies to a config of one database; with databases give each "
             "its databaseUrl or databaseUrlFile");
  std::set<std::string> names, told;
  for (auto& m : dbs.GetObject()) {
    std::string name{m.name.GetString(), m.name.GetStringLength()};
    auto path = "databases." + name;
    if (auto rule = check_database_name(name); !rule.empty()) {
      errs.add("databases", m.name, rule);
      continue;
    }
    if (!names.insert(name).second) {
      errs.add(path, "given more than once");
      continue;
    }
    if (!check_entry(m.value, path, errs))
      continue;
    rapidjson::Document merged;
    merge_entry(doc, m.value, merged);
    config cfg;
    cfg.database = name;
    problems found;
    read_database(merged, env, false, found, cfg);
    cfg.names.dispatch_tag = dispatch_tag_of(name);
    place_problems(found, doc, m.value, path, told, errs);
    out.push_back(std::move(cfg));
  }
  std::sort(out.begin(), out.end(), [](const config& a, const config& b) {
    return a.database < b.database;
  });
  check_apart(out, errs);
}

} // namespace config_detail
} // namespace outbox
