// How deeply a JSON text nests, found without parsing it: RapidJSON's
// default parser, its writer and any recursive reader use a stack frame per
// level, and a message nested a million deep overflows the stack. A caller
// measures first and refuses what is too deep for the parser behind it.
#pragma once

#include <cstddef>
#include <string_view>

namespace outbox {

/// True when no object or array in `text` nests deeper than `limit`
/// (brackets inside strings do not count). Linear; stops at the first level
/// beyond the limit. Says nothing about whether `text` is valid JSON.
bool json_depth_within(std::string_view text, size_t limit);

} // namespace outbox
