#include "actors/lessons.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

namespace eat {

namespace {

/// Passed candidates grouped by the value of one parameter.
using groups = std::map<std::string, std::vector<const scored_candidate*>>;

double median(std::vector<const scored_candidate*> xs) {
  std::sort(xs.begin(), xs.end(),
            [](auto a, auto b) { return a->speedup < b->speedup; });
  auto n = xs.size();
  return n % 2 == 1 ? xs[n / 2]->speedup
                    : (xs[n / 2 - 1]->speedup + xs[n / 2]->speedup) / 2;
}

std::string fixed(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", x);
  return buf;
}

/// The lesson on one parameter, if one value is clearly best: at least three
/// passed candidates with it and two with the runner-up, and a median 1.25
/// times the runner-up's.
std::optional<learning_entry> parameter_lesson(const std::string& family,
                                               const std::string& param,
                                               const groups& g) {
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [value, xs] : g)
    ranked.emplace_back(median(xs), value);
  std::sort(ranked.rbegin(), ranked.rend());
  if (ranked.size() < 2 || g.at(ranked[0].second).size() < 3
      || g.at(ranked[1].second).size() < 2
      || ranked[0].first < 1.25 * ranked[1].first)
    return std::nullopt;
  const auto& best = g.at(ranked[0].second);
  const auto& second = g.at(ranked[1].second);
  learning_entry e;
  e.text = "**" + family + " / " + param + "**: `" + ranked[0].second
           + "` is clearly the best value: median " + fixed(ranked[0].first)
           + "x over " + std::to_string(best.size())
           + " passed candidates, against " + fixed(ranked[1].first)
           + "x for `" + ranked[1].second + "` ("
           + std::to_string(second.size()) + ").";
  auto top = best;
  std::sort(top.begin(), top.end(),
            [](auto a, auto b) { return a->speedup > b->speedup; });
  for (size_t i = 0; i < top.size() && i < 3; ++i)
    e.evidence.push_back(top[i]->id);
  auto runner = *std::max_element(second.begin(), second.end(),
                                  [](auto a, auto b) {
                                    return a->speedup < b->speedup;
                                  });
  e.evidence.push_back(runner->id);
  return e;
}

std::optional<learning_entry>
failure_lesson(const std::vector<scored_candidate>& scored) {
  std::map<std::string, uint64_t> counts;
  learning_entry e;
  for (const auto& s : scored)
    if (s.status != eval_status::passed) {
      counts[to_string(s.status)] += 1;
      if (e.evidence.size() < 5)
        e.evidence.push_back(s.id);
    }
  if (counts.empty())
    return std::nullopt;
  uint64_t failed = 0;
  std::string mix;
  for (const auto& [status, n] : counts) {
    failed += n;
    mix += (mix.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  }
  e.text = "**failures**: " + std::to_string(failed) + " of "
           + std::to_string(scored.size()) + " candidates failed (" + mix
           + ").";
  return e;
}

std::vector<learning_entry>
all_lessons(const std::vector<scored_candidate>& scored) {
  std::map<std::pair<std::string, std::string>, groups> by_param;
  for (const auto& s : scored)
    if (s.status == eval_status::passed)
      for (const auto& [param, value] : s.params)
        by_param[{s.family, param}][value].push_back(&s);
  std::vector<learning_entry> out;
  for (const auto& [key, g] : by_param)
    if (auto e = parameter_lesson(key.first, key.second, g))
      out.push_back(std::move(*e));
  if (auto e = failure_lesson(scored))
    out.push_back(std::move(*e));
  return out;
}

} // namespace

std::string lesson_subject(const std::string& text) {
  if (text.rfind("**", 0) != 0)
    return "";
  auto end = text.find("**", 2);
  return end == std::string::npos ? "" : text.substr(2, end - 2);
}

std::vector<learning_entry>
derive_lessons(const std::vector<scored_candidate>& scored,
               const std::vector<learning_entry>& earlier) {
  // The current (not superseded) lesson on each subject.
  std::set<std::string> superseded;
  for (const auto& e : earlier)
    if (!e.supersedes.empty())
      superseded.insert(e.supersedes);
  std::map<std::string, const learning_entry*> current;
  for (const auto& e : earlier)
    if (superseded.count(e.id) == 0)
      current[lesson_subject(e.text)] = &e;
  std::vector<learning_entry> out;
  auto next = earlier.size();
  for (auto& e : all_lessons(scored)) {
    auto old = current.find(lesson_subject(e.text));
    if (old != current.end() && old->second->text == e.text)
      continue;
    char id[16];
    std::snprintf(id, sizeof(id), "L%04zu", ++next);
    e.id = id;
    e.author = learning_author::supervisor;
    if (old != current.end())
      e.supersedes = old->second->id;
    out.push_back(std::move(e));
  }
  return out;
}

} // namespace eat
