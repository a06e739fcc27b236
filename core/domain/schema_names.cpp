#include "core/domain/schema_names.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/domain/dispatch_tag.hpp"

namespace outbox {

namespace {

// PostgreSQL 15's keywords that are not "unreserved" (pg_get_keywords()
// with catcode <> 'U', sorted): the outbox writes its names unquoted, and
// none of these can stand as both a table and a function name that way.
const char* const non_unreserved_keywords[] = {
    "all", "analyse", "analyze", "and", "any", "array", "as", "asc",
    "asymmetric", "authorization", "between", "bigint", "binary", "bit",
    "boolean", "both", "case", "cast", "char", "character", "check",
    "coalesce", "collate", "collation", "column", "concurrently",
    "constraint", "create", "cross", "current_catalog", "current_date",
    "current_role", "current_schema", "current_time", "current_timestamp",
    "current_user", "dec", "decimal", "default", "deferrable", "desc",
    "distinct", "do", "else", "end", "except", "exists", "extract", "false",
    "fetch", "float", "for", "foreign", "freeze", "from", "full", "grant",
    "greatest", "group", "grouping", "having", "ilike", "in", "initially",
    "inner", "inout", "int", "integer", "intersect", "interval", "into", "is",
    "isnull", "join", "lateral", "leading", "least", "left", "like", "limit",
    "localtime", "localtimestamp", "national", "natural", "nchar", "none",
    "normalize", "not", "notnull", "null", "nullif", "numeric", "offset",
    "on", "only", "or", "order", "out", "outer", "overlaps", "overlay",
    "placing", "position", "precision", "primary", "real", "references",
    "returning", "right", "row", "select", "session_user", "setof", "similar",
    "smallint", "some", "substring", "symmetric", "table", "tablesample",
    "then", "time", "timestamp", "to", "trailing", "treat", "trim", "true",
    "union", "unique", "user", "using", "values", "varchar", "variadic",
    "verbose", "when", "where", "window", "with", "xmlattributes",
    "xmlconcat", "xmlelement", "xmlexists", "xmlforest", "xmlnamespaces",
    "xmlparse", "xmlpi", "xmlroot", "xmlserialize", "xmltable",
};

bool is_keyword(const std::string& name) {
  return std::binary_search(
    std::begin(non_unreserved_keywords), std::end(non_unreserved_keywords),
    name, [](const std::string& a, const std::string& b) { return a < b; });
}

} // namespace

schema_names schema_names::with_prefix(const std::string& prefix) const {
  return {prefix + events, prefix + deliveries, prefix + migrations,
          prefix + publish_function, dispatch_tag};
}

std::string fill_names(std::string sql, const schema_names& names) {
  auto new_dispatch_id = new_dispatch_id_sql(names.dispatch_tag);
  const std::pair<const char*, const std::string*> slots[] = {
    {"{{events}}", &names.events},
    {"{{deliveries}}", &names.deliveries},
    {"{{migrations}}", &names.migrations},
    {"{{publish_function}}", &names.publish_function},
    {"{{new_dispatch_id}}", &new_dispatch_id}};
  for (auto [from, to] : slots) {
    std::string key = from;
    for (size_t p = 0; (p = sql.find(key, p)) != std::string::npos;
         p += to->size())
      sql.replace(p, key.size(), *to);
  }
  return sql;
}

std::string check_identifier(const std::string& name) {
  if (name.empty())
    return "must not be empty";
  if (name.size() > max_identifier_length)
    return "must have at most " + std::to_string(max_identifier_length)
           + " characters";
  auto lower = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!lower(name[0]))
    return "must start with a lower-case letter or '_'";
  for (char c : name)
    if (!lower(c) && !digit(c))
      return "may hold only lower-case letters, digits and '_'";
  if (is_keyword(name))
    return "is a keyword of PostgreSQL's SQL (choose another name)";
  // The system catalogs' prefix: PostgreSQL refuses new tables there.
  if (name.rfind("pg_", 0) == 0)
    return "must not start with \"pg_\" (reserved for PostgreSQL's catalogs)";
  return {};
}

} // namespace outbox
