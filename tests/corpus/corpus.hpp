// Reads the bad-input corpus that tests/corpus/generate.py writes: config
// files, flag sets and job and result messages, each with what must come
// back (a part of the error text, or "ok").
#pragma once

#include <string>
#include <vector>

namespace outbox::testing {

struct corpus_config_file {
  std::string path;
  std::string expect;
};

struct corpus_flag_set {
  std::string binary; ///< outboxd or outboxctl
  std::vector<std::string> args; ///< "{config}" stands for a good config file
  std::string expect;
};

struct corpus_message {
  std::string kind; ///< "job" or "result"
  std::string name;
  std::string body;
  std::string expect;
};

std::vector<corpus_config_file> corpus_config_files();
std::vector<corpus_flag_set> corpus_flag_sets();
std::vector<corpus_message> corpus_messages();

} // namespace outbox::testing
