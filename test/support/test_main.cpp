// The tests' main (doctest's), plus a reporter that writes the list of test cases as a CTest
// script: `<test exe> --list-test-cases --reporters=ctest --out=<file>` gives one add_test per
// case (cmake/SeedrlTests.cmake registers them; every case is a CTest entry of its own).
//
// Names go into CMake bracket arguments, which take any character: doctest's own CMake module
// splits names at ';' and '[', which ours contain.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <ostream>
#include <string>

namespace {

class CTestReporter final : public doctest::IReporter {
 public:
  explicit CTestReporter(const doctest::ContextOptions& options) : out_(*options.cout) {}

  void report_query(const doctest::QueryData& query) override {
    if (query.data == nullptr) return;  // not a list of test cases (--version, --help, ...)
    for (unsigned i = 0; i < query.num_data; ++i) {
      const std::string name = query.data[i]->m_name;
      out_ << "add_test(" << bracket(name) << " \"${SEEDRL_TEST_EXECUTABLE}\" "
           << bracket("--test-case=" + filter(name)) << ")\n"
           << "set_tests_properties(" << bracket(name)
           << " PROPERTIES ${SEEDRL_TEST_PROPERTIES})\n";
      // A case's doctest test suite is a CTest label too: "learning" marks the long learning
      // tests, which the sanitizer stages leave to the release run (scripts/run-tests.sh).
      if (const char* suite = query.data[i]->m_test_suite; suite != nullptr && *suite != '\0')
        out_ << "set_tests_properties(" << bracket(name)
             << " PROPERTIES LABELS \"${SEEDRL_TEST_LABEL};" << suite << "\")\n";
    }
  }
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  static std::string bracket(const std::string& text) { return "[=====[" + text + "]=====]"; }
  // doctest's --test-case takes comma-separated patterns: escape the commas of a name.
  static std::string filter(const std::string& name) {
    std::string out;
    for (char c : name) {
      if (c == ',' || c == '\\') out += '\\';
      out += c;
    }
    return out;
  }

  std::ostream& out_;
};

}  // namespace

REGISTER_REPORTER("ctest", 1, CTestReporter);
