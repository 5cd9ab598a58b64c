// The metrics file (crema/metrics_file.hpp) as a training run writes it: a
// line per display and per test, the rate the schedule gives, whole lines
// only, appended by a resumed run after cutting a partial last line.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "crema/metrics_file.hpp"
#include "crema/sgd_solvers.hpp"
#include "linear_solver.hpp"
#include "test_common.hpp"
#include "test_error_message.hpp"
#include "test_scratch.hpp"

namespace crema {
namespace {

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The text after "key": up to the next comma or brace.
std::string Field(const std::string& line, const std::string& key) {
  const std::string tag = "\"" + key + "\": ";
  const size_t at = line.find(tag);
  if (at == std::string::npos) return "";
  const size_t from = at + tag.size();
  return line.substr(from, line.find_first_of(",}", from) - from);
}

class MetricsFileTest : public ScratchDirTest {
 protected:
  SolverParameter Param() const {
    SolverParameter param = LinearSolver(
        "SGD", "test_iter: 1 test_interval: 4 gamma: 0.5 stepsize: 3 snapshot: 4 "
               "snapshot_prefix: '" + dir_ + "/linear'");
    param.set_display(2);
    param.set_lr_policy("step");
    param.set_max_iter(8);
    return param;
  }
};

TEST_F(MetricsFileTest, ALinePerDisplayAndPerTestWithTheScheduleRate) {
  auto solver = CreateSolver<double>(Param());
  const std::string path = dir_ + "/run.metrics.jsonl";
  solver->set_metrics_file(path);
  solver->Solve();
  const std::vector<std::string> lines = Lines(path);
  // Displays at 0, 2, 4, 6; tests at 0, 4 (each before its iteration) and 8.
  const std::vector<std::pair<std::string, std::string>> expected{
      {"\"test\"", "0"},  {"\"train\"", "0"}, {"\"train\"", "2"}, {"\"test\"", "4"},
      {"\"train\"", "4"}, {"\"train\"", "6"}, {"\"test\"", "8"}};
  ASSERT_EQ(lines.size(), expected.size());
  const std::vector<std::string> rates{"0.100000001", "0.100000001", "0.0500000007",
                                       "0.0250000004"};
  int train = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    EXPECT_EQ(lines[i].front(), '{');
    EXPECT_EQ(lines[i].back(), '}');
    EXPECT_EQ(Field(lines[i], "kind"), expected[i].first);
    EXPECT_EQ(Field(lines[i], "iter"), expected[i].second);
    EXPECT_NE(Field(lines[i], "time"), "");
    EXPECT_NE(lines[i].find("\"outputs\": {\"loss\": "), std::string::npos);
    if (expected[i].first == "\"train\"") {
      EXPECT_EQ(Field(lines[i], "lr"), rates[train++]);  // 0.1 * 0.5^floor(iter / 3)
      EXPECT_NE(Field(lines[i], "images_per_s"), "");
    } else {
      EXPECT_EQ(Field(lines[i], "net"), "0");
    }
  }
}

TEST_F(MetricsFileTest, AResumedRunAppendsAfterCuttingAPartialLine) {
  const std::string path = dir_ + "/run.metrics.jsonl";
  {
    auto solver = CreateSolver<double>(Param());
    solver->set_metrics_file(path);
    solver->Solve();
  }
  ASSERT_EQ(Lines(path).size(), 7u);
  {
    std::ofstream cut(path, std::ios::app);
    cut << "{\"kind\": \"tra";  // a line a full disk cut short
  }
  auto resumed = CreateSolver<double>(Param());
  resumed->set_metrics_file(path);
  resumed->Solve(dir_ + "/linear_iter_4.solverstate");
  const std::vector<std::string> lines = Lines(path);
  // The seven lines, then from iteration 4 again: test 4, train 4, 6, test 8.
  ASSERT_EQ(lines.size(), 11u);
  for (const std::string& line : lines) EXPECT_EQ(line.back(), '}') << line;
  EXPECT_EQ(Field(lines[7], "kind"), "\"test\"");
  EXPECT_EQ(Field(lines[7], "iter"), "4");
  // A fresh run starts the file anew.
  auto fresh = CreateSolver<double>(Param());
  fresh->set_metrics_file(path);
  fresh->Solve();
  EXPECT_EQ(Lines(path).size(), 7u);
}

TEST_F(MetricsFileTest, ValuesThatAreNotFiniteAreNull) {
  const std::string path = dir_ + "/direct.jsonl";
  MetricsFile file(path, false);
  file.Test(3, 1, {{"acc", {0.5}}, {"odd \"name\"", {1, std::nan("")}}});
  const std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"outputs\": {\"acc\": 0.5, \"odd \\\"name\\\"\": [1, null]}"),
            std::string::npos)
      << lines[0];
}

TEST_F(MetricsFileTest, AFileThatCannotBeOpenedIsNamed) {
  const std::string message =
      ErrorMessageOf([&] { MetricsFile file(dir_ + "/missing/folder/m.jsonl", false); });
  EXPECT_NE(message.find("missing/folder/m.jsonl"), std::string::npos) << message;
}

}  // namespace
}  // namespace crema
