// Tests of the hybrid example's parts: the Gaussian process, the loop's decisions, the simulation
// files, the service's request handling, the ZeroMQ client and the MPI solver itself.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <zmq.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "examples/hybrid/active_learning.hpp"
#include "examples/hybrid/gaussian_process.hpp"
#include "examples/hybrid/service_client.hpp"
#include "examples/hybrid/sim_record.hpp"
#include "examples/hybrid/surrogate_service.hpp"

namespace fs = std::filesystem;
using chorus::hybrid::GaussianProcess;
using chorus::hybrid::Point;
using chorus::hybrid::Scored;

namespace {

double truth(const Point& p) {
  return std::sin(3.0 * p[0]) * std::cos(2.0 * p[1]) + p[0] * p[1];
}

double test_rmse(const GaussianProcess& gp) {
  std::vector<Point> grid;
  std::vector<double> actual;
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j) {
      grid.push_back({(i + 0.5) / 10, (j + 0.5) / 10});
      actual.push_back(truth(grid.back()));
    }
  std::vector<double> mean;
  for (const auto& p : gp.predict(grid)) mean.push_back(p.mean);
  return *chorus::hybrid::rmse(mean, actual);
}

// A fresh folder under the system's temporary directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "hybrid-test.XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

}  // namespace

TEST_CASE("Examples.Hybrid.GaussianProcess.PriorWithoutData") {
  GaussianProcess gp;
  REQUIRE(gp.fit({}, {}).ok());
  const auto p = gp.predict({{0.3, 0.4}});
  CHECK(p[0].mean == doctest::Approx(0.0));
  CHECK(p[0].std == doctest::Approx(1.0));
}

TEST_CASE("Examples.Hybrid.GaussianProcess.InterpolatesTrainingPoints") {
  const auto x = chorus::hybrid::space_filling(12, 3);
  std::vector<double> y;
  for (const Point& p : x) y.push_back(truth(p));
  GaussianProcess gp;
  REQUIRE(gp.fit(x, y).ok());
  const auto at_data = gp.predict(x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    CHECK(at_data[i].mean == doctest::Approx(y[i]).epsilon(0.05));
    CHECK(at_data[i].std < 0.1);
  }
  // Uncertainty grows away from the data: a point outside the square is farther than any.
  CHECK(gp.predict({{3.0, 3.0}})[0].std > 5 * at_data[0].std);
}

TEST_CASE("Examples.Hybrid.GaussianProcess.MoreDataFitsBetter") {
  GaussianProcess small, large;
  for (auto [gp, n] : {std::pair{&small, 5}, std::pair{&large, 40}}) {
    const auto x = chorus::hybrid::space_filling(n, 11);
    std::vector<double> y;
    for (const Point& p : x) y.push_back(truth(p));
    REQUIRE(gp->fit(x, y).ok());
  }
  CHECK(test_rmse(large) < 0.5 * test_rmse(small));
  CHECK(test_rmse(large) < 0.02);
}

TEST_CASE("Examples.Hybrid.GaussianProcess.RejectsBadInputAndKeepsModel") {
  GaussianProcess gp;
  REQUIRE(gp.fit({{0.1, 0.1}, {0.9, 0.9}}, {1.0, 2.0}).ok());
  const chorus::Status mismatch = gp.fit({{0.1, 0.1}}, {1.0, 2.0});
  CHECK_FALSE(mismatch.ok());
  CHECK(mismatch.message().find("1 points but 2 values") != std::string::npos);
  CHECK_FALSE(gp.fit({{0.1, NAN}}, {1.0}).ok());
  CHECK(gp.size() == 2);
}

TEST_CASE("Examples.Hybrid.GaussianProcess.DuplicatePointsStillFit") {
  GaussianProcess gp;
  REQUIRE(gp.fit({{0.5, 0.5}, {0.5, 0.5}, {0.2, 0.8}}, {1.0, 1.2, 0.0}).ok());
  CHECK(gp.predict({{0.5, 0.5}})[0].mean == doctest::Approx(1.1).epsilon(0.1));
}

TEST_CASE("Examples.Hybrid.ActiveLearning.SpaceFillingIsALatinHypercube") {
  const auto a = chorus::hybrid::space_filling(8, 7);
  REQUIRE(a.size() == 8);
  std::set<int> rows, cols;
  for (const Point& p : a) {
    CHECK((p[0] >= 0.0 && p[0] < 1.0 && p[1] >= 0.0 && p[1] < 1.0));
    rows.insert(static_cast<int>(p[0] * 8));
    cols.insert(static_cast<int>(p[1] * 8));
  }
  CHECK(rows.size() == 8);
  CHECK(cols.size() == 8);
  CHECK(chorus::hybrid::space_filling(8, 7) == a);
  CHECK(chorus::hybrid::space_filling(8, 8) != a);
}

TEST_CASE("Examples.Hybrid.ActiveLearning.GridSlicesCoverTheGridOnce") {
  for (int nparts : {1, 7, 200}) {
    std::set<Point> seen;
    std::size_t total = 0;
    for (int part = 0; part < nparts; ++part) {
      auto slice = chorus::hybrid::grid_slice(part, nparts);
      REQUIRE(slice.ok());
      total += slice->size();
      seen.insert(slice->begin(), slice->end());
    }
    CHECK(total == 4096);
    CHECK(seen.size() == 4096);
  }
  CHECK_FALSE(chorus::hybrid::grid_slice(200, 200).ok());
  CHECK_FALSE(chorus::hybrid::grid_slice(0, 0).ok());
}

TEST_CASE("Examples.Hybrid.ActiveLearning.SelectBatchSpreadsLargestStd") {
  const std::vector<Scored> scored = {{{0.10, 0.10}, 0.0, 0.9},
                                      {{0.12, 0.10}, 0.0, 0.8},  // next to the best: skipped
                                      {{0.90, 0.90}, 0.0, 0.5},
                                      {{0.50, 0.50}, 0.0, 0.1},
                                      {{0.50, 0.55}, 0.0, 0.05}};
  const auto batch = chorus::hybrid::select_batch(scored, 3, 0.1);
  REQUIRE(batch.size() == 3);
  CHECK(batch[0].x == Point{0.10, 0.10});
  CHECK(batch[1].x == Point{0.90, 0.90});
  CHECK(batch[2].x == Point{0.50, 0.50});
  CHECK(chorus::hybrid::select_batch(scored, 10, 0.1).size() == 3);
}

TEST_CASE("Examples.Hybrid.ActiveLearning.ImprovedNeedsAFivePercentDrop") {
  using chorus::hybrid::improved;
  CHECK(improved(std::nullopt, std::nullopt));
  CHECK(improved(std::nullopt, 1.0));
  CHECK(improved(1.0, std::nullopt));
  CHECK(improved(1.0, 0.94));
  CHECK_FALSE(improved(1.0, 0.96));
  CHECK_FALSE(improved(1.0, 1.5));
  CHECK(*chorus::hybrid::rmse({1.0, 3.0}, {0.0, 0.0}) == doctest::Approx(std::sqrt(5.0)));
  CHECK_FALSE(chorus::hybrid::rmse({}, {}).has_value());
}

TEST_CASE("Examples.Hybrid.SimRecord.LoadsRoundsInOrder") {
  TempDir dir;
  write(dir.path / "round-2" / "sim-0.json", R"({"a":0.2,"b":0.3,"value":4,"ranks":2})");
  write(dir.path / "round-1" / "sim-10.json", R"({"a":0.5,"b":0.5,"value":2,"ranks":2})");
  write(dir.path / "round-1" / "sim-2.json", R"({"a":0.1,"b":0.1,"value":1,"ranks":2})");
  write(dir.path / "round-1" / "sim-3.json.tmp", "half a fi");
  write(dir.path / "round-1" / "candidates.json", "[]");
  auto all = chorus::hybrid::load_sims(dir.path);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].index == 2);
  CHECK((*all)[1].index == 10);
  CHECK((*all)[2].round == 2);
  CHECK((*all)[2].value == 4.0);
  auto second = chorus::hybrid::load_sims(dir.path, 2);
  REQUIRE(second.ok());
  CHECK(second->size() == 1);

  write(dir.path / "round-3" / "sim-0.json", R"({"a":0.2,"value":4})");
  auto bad = chorus::hybrid::load_sims(dir.path);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("sim-0.json: no numeric \"b\"") != std::string::npos);
}

TEST_CASE("Examples.Hybrid.SurrogateService.AnswersTheProtocol") {
  chorus::hybrid::SurrogateService service;
  auto status = service.handle({{"op", "status"}});
  CHECK(status["ok"] == true);
  CHECK(status["n_train"] == 0);

  auto fitted = service.handle(
      {{"op", "fit"}, {"points", {{0.1, 0.1, 1.0}, {0.9, 0.9, 3.0}, {0.5, 0.2, 2.0}}}});
  REQUIRE(fitted["ok"] == true);
  CHECK(fitted["n_train"] == 3);
  auto predicted = service.handle({{"op", "predict"}, {"points", {{0.1, 0.1}, {0.6, 0.6}}}});
  REQUIRE(predicted["ok"] == true);
  CHECK(predicted["mean"].size() == 2);
  CHECK(predicted["mean"][0].get<double>() == doctest::Approx(1.0).epsilon(0.05));
  CHECK(predicted["std"][1].get<double>() > predicted["std"][0].get<double>());

  CHECK(service.handle({{"op", "train"}})["error"].get<std::string>().find("unknown op 'train'") !=
        std::string::npos);
  CHECK(service.handle({{"op", "predict"}, {"points", {{0.1}}}})["ok"] == false);
  CHECK(service.handle({{"op", "fit"}})["ok"] == false);
  CHECK(service.handle(nlohmann::json::array())["ok"] == false);
  CHECK(service.handle({{"op", "status"}})["n_train"] == 3);  // failures kept the model
}

TEST_CASE("Examples.Hybrid.SurrogateService.FitsADirectoryUpToARound") {
  TempDir dir;
  write(dir.path / "round-1" / "sim-0.json", R"({"a":0.2,"b":0.3,"value":4})");
  write(dir.path / "round-2" / "sim-0.json", R"({"a":0.7,"b":0.3,"value":5})");
  chorus::hybrid::SurrogateService service;
  auto up_to_1 = service.handle({{"op", "fit"}, {"dir", dir.path.string()}, {"max_round", 1}});
  CHECK(up_to_1["n_train"] == 1);
  auto none = service.handle({{"op", "fit"}, {"dir", dir.path.string()}, {"max_round", 0}});
  CHECK(none["n_train"] == 0);
  auto all = service.handle({{"op", "fit"}, {"dir", dir.path.string()}});
  CHECK(all["n_train"] == 2);
  auto missing = service.handle({{"op", "fit"}, {"dir", (dir.path / "nope").string()}});
  CHECK(missing["ok"] == false);
}

TEST_CASE("Examples.Hybrid.ServiceClient.EndpointsAndReplicas") {
  using chorus::hybrid::split_endpoints;
  CHECK(split_endpoints("tcp://127.0.0.1:5600, tcp://127.0.0.1:5601,") ==
        std::vector<std::string>{"tcp://127.0.0.1:5600", "tcp://127.0.0.1:5601"});
  CHECK(split_endpoints("").empty());
  std::set<std::size_t> used;
  for (int i = 0; i < 64; ++i)
    used.insert(chorus::hybrid::pick_replica("learn.score.part=" + std::to_string(i), 3));
  CHECK(used == std::set<std::size_t>{0, 1, 2});
  CHECK(chorus::hybrid::pick_replica("x", 3) == chorus::hybrid::pick_replica("x", 3));
}

TEST_CASE("Examples.Hybrid.ServiceClient.TalksToAReplyLoop") {
  // One REP socket in a thread answering through SurrogateService: the same code path as the
  // surrogate program, minus its signal handling.
  void* context = zmq_ctx_new();
  void* rep = zmq_socket(context, ZMQ_REP);
  REQUIRE(zmq_bind(rep, "tcp://127.0.0.1:*") == 0);
  char endpoint[256];
  size_t len = sizeof endpoint;
  REQUIRE(zmq_getsockopt(rep, ZMQ_LAST_ENDPOINT, endpoint, &len) == 0);
  std::thread server([rep] {
    chorus::hybrid::SurrogateService service;
    for (int i = 0; i < 2; ++i) {
      char buf[4096];
      const int n = zmq_recv(rep, buf, sizeof buf, 0);
      if (n < 0) return;
      auto reply = service.handle(nlohmann::json::parse(buf, buf + n)).dump();
      zmq_send(rep, reply.data(), reply.size(), 0);
    }
  });
  auto client = chorus::hybrid::ServiceClient::connect(endpoint, std::chrono::seconds(30));
  REQUIRE(client.ok());
  auto ok = client->call({{"op", "status"}});
  REQUIRE(ok.ok());
  CHECK((*ok)["n_train"] == 0);
  auto refused = client->call({{"op", "nonsense"}});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("unknown op 'nonsense'") != std::string::npos);
  server.join();
  zmq_close(rep);
  zmq_ctx_term(context);
}

TEST_CASE("Examples.Hybrid.ServiceClient.NoServiceIsAnErrorNotAHang") {
  // Port 1 on loopback: nothing listens there (and an unprivileged bind could not).
  auto client =
      chorus::hybrid::ServiceClient::connect("tcp://127.0.0.1:1", std::chrono::milliseconds(200));
  REQUIRE(client.ok());
  auto reply = client->call({{"op", "status"}});
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == chorus::ErrorCode::unavailable);
  CHECK(reply.status().message().find("is the surrogate service running") != std::string::npos);
  CHECK_FALSE(client->call({{"op", "status"}}).ok());
}

namespace {

// Runs heat_solver under mpirun with `ranks` ranks on candidate `index` of `candidates`; returns
// mpirun's exit status and fills `out` with the result file when it succeeded.
int run_solver(const fs::path& dir, int ranks, int index, nlohmann::json* out) {
  const fs::path result = dir / ("out-" + std::to_string(ranks) + "-" + std::to_string(index));
  const std::string cmd =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
      "OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo "
      "OMPI_MCA_oob_tcp_if_include=lo mpirun --oversubscribe -n " +
      std::to_string(ranks) + " " HYBRID_BIN_DIR "/heat_solver " +
      (dir / "candidates.json").string() + " " + std::to_string(index) + " " + result.string() +
      " > " + (dir / "log").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc == 0 && out != nullptr) *out = nlohmann::json::parse(std::ifstream(result));
  return rc;
}

}  // namespace

TEST_CASE("Examples.Hybrid.HeatSolver.SameValueOnOneAndTwoRanks") {
  TempDir dir;
  write(dir.path / "candidates.json", R"([{"a":0.8,"b":0.6}, {"a":0.1, "b":0.9}])");
  nlohmann::json one, two, other;
  REQUIRE(run_solver(dir.path, 1, 0, &one) == 0);
  REQUIRE(run_solver(dir.path, 2, 0, &two) == 0);
  REQUIRE(run_solver(dir.path, 2, 1, &other) == 0);
  CHECK(one["ranks"] == 1);
  CHECK(two["ranks"] == 2);
  CHECK(two["a"].get<double>() == doctest::Approx(0.8));
  // The halo exchange is right when splitting the rows changes nothing but rounding.
  CHECK(two["value"].get<double>() == doctest::Approx(one["value"].get<double>()).epsilon(1e-9));
  // And the parameters matter: a source far from the sensor warms it much less.
  CHECK(other["value"].get<double>() < 0.5 * two["value"].get<double>());
}

TEST_CASE("Examples.Hybrid.HeatSolver.RejectsAMissingCandidate") {
  TempDir dir;
  write(dir.path / "candidates.json", R"([{"a":0.5,"b":0.5}])");
  CHECK(run_solver(dir.path, 2, 3, nullptr) != 0);
  std::ifstream log(dir.path / "log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK(text.find("no candidate 3 (the list has 1)") != std::string::npos);
  write(dir.path / "candidates.json", R"([{"a":1.5,"b":0.5}])");
  CHECK(run_solver(dir.path, 1, 0, nullptr) != 0);
}
