#include "actors/agent/http_client.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <mutex>

#include <curl/curl.h>

#include "actors/protocol/error.hpp"

namespace eat {

namespace {

struct curl_deleter {
  void operator()(CURL* x) const {
    curl_easy_cleanup(x);
  }
  void operator()(curl_slist* x) const {
    curl_slist_free_all(x);
  }
};

using curl_ptr = std::unique_ptr<CURL, curl_deleter>;
using slist_ptr = std::unique_ptr<curl_slist, curl_deleter>;

/// A fresh easy handle; curl_global_init runs once, before the first.
curl_ptr make_handle() {
  static std::once_flag once;
  std::call_once(once, [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
  });
  return curl_ptr{curl_easy_init()};
}

std::string lower(std::string x) {
  std::transform(x.begin(), x.end(), x.begin(), [](unsigned char c) {
    return std::tolower(c);
  });
  return x;
}

std::string trim(std::string_view x) {
  auto first = x.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos)
    return {};
  auto last = x.find_last_not_of(" \t\r\n");
  return std::string{x.substr(first, last - first + 1)};
}

/// What the curl callbacks fill in during one transfer.
struct transfer {
  http_response response;
  const body_callback* on_body = nullptr;
  size_t max_body_bytes = 0;
  bool too_large = false;
};

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<transfer*>(user);
  std::string_view line{data, size * count};
  if (line.rfind("HTTP/", 0) == 0) // a new response (e.g. after 100 Continue)
    t.response.headers.clear();
  auto colon = line.find(':');
  if (colon != std::string_view::npos)
    t.response.headers[lower(trim(line.substr(0, colon)))]
      = trim(line.substr(colon + 1));
  return size * count;
}

/// Curl's progress callback (at least once a second): non-zero abandons
/// the transfer once the run is ending.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(user)->load() ? 1 : 0;
}

size_t on_data(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<transfer*>(user);
  std::string_view piece{data, size * count};
  if (t.response.body.size() + piece.size() > t.max_body_bytes) {
    t.too_large = true;
    return 0; // curl ends the transfer (CURLE_WRITE_ERROR)
  }
  t.response.body.append(piece);
  if (t.on_body != nullptr && *t.on_body)
    (*t.on_body)(piece);
  return size * count;
}

std::string host_port(const std::string& url) {
  auto parts = parse_url(url);
  return parts ? parts->host + ":" + std::to_string(parts->port) : url;
}

/// Our error for a failed transfer.
caf::error transfer_error(
  CURL* h, CURLcode rc, const std::string& url, const char* detail) {
  long os_errno = 0;
  curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
  std::string why = os_errno != 0  ? std::strerror(static_cast<int>(os_errno))
                    : *detail != 0 ? detail
                                   : curl_easy_strerror(rc);
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
      return make_error(error::agent_failed,
        "cannot connect to " + host_port(url) + " (" + why + ")");
    case CURLE_OPERATION_TIMEDOUT:
      return make_error(error::agent_failed,
        "request to " + url + " timed out (" + detail + ")");
    default:
      return make_error(
        error::agent_failed, "request to " + url + " failed (" + why + ")");
  }
}

void set_timeouts(CURL* h, const http_request& req) {
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
    static_cast<long>(req.connect_timeout.count()));
  curl_easy_setopt(
    h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.total_timeout.count()));
  if (req.idle_timeout.count() > 0) {
    // Below 1 byte per second for the idle time: curl aborts the transfer.
    auto secs = std::max<long>(1, req.idle_timeout.count() / 1000);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, secs);
  }
}

} // namespace

caf::expected<http_response> http_post(
  const http_request& req, const body_callback& on_body) {
  auto h = make_handle();
  if (!h)
    return make_error(error::agent_failed, "curl_easy_init failed");
  slist_ptr headers;
  for (const auto& [name, value] : req.headers)
    headers.reset(
      curl_slist_append(headers.release(), (name + ": " + value).c_str()));
  // No "Expect: 100-continue" round trip before large bodies.
  headers.reset(curl_slist_append(headers.release(), "Expect:"));
  transfer t;
  t.on_body = &on_body;
  t.max_body_bytes = req.max_body_bytes;
  char detail[CURL_ERROR_SIZE] = {0};
  auto* x = h.get();
  curl_easy_setopt(x, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(x, CURLOPT_POST, 1L);
  curl_easy_setopt(x, CURLOPT_POSTFIELDS, req.body.data());
  curl_easy_setopt(
    x, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  curl_easy_setopt(x, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(x, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(x, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(x, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(x, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(x, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(x, CURLOPT_WRITEDATA, &t);
  set_timeouts(x, req);
  if (req.halt != nullptr) {
    curl_easy_setopt(x, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(x, CURLOPT_XFERINFODATA, req.halt);
    curl_easy_setopt(x, CURLOPT_NOPROGRESS, 0L);
  }
  auto rc = curl_easy_perform(x);
  if (rc == CURLE_ABORTED_BY_CALLBACK && req.halt != nullptr)
    return make_error(error::agent_failed, "stopped: the run is ending");
  if (t.too_large)
    return make_error(error::agent_failed,
      "the response from " + req.url + " went past "
        + (req.max_body_bytes >= (size_t{1} << 20)
             ? std::to_string(req.max_body_bytes >> 20) + " MiB"
             : std::to_string(req.max_body_bytes) + " bytes")
        + "; stopped reading");
  if (rc != CURLE_OK)
    return transfer_error(x, rc, req.url, detail);
  curl_easy_getinfo(x, CURLINFO_RESPONSE_CODE, &t.response.status);
  return std::move(t.response);
}

caf::expected<url_parts> parse_url(std::string_view url) {
  auto fail = [&](const std::string& why) {
    return make_error(
      error::invalid_config, "bad URL '" + std::string{url} + "': " + why);
  };
  url_parts result;
  auto sep = url.find("://");
  if (sep == std::string_view::npos)
    return fail("expected http://host[:port][/path]");
  // user:password@host: neither echoed in messages (they were) nor sent.
  auto at = url.find('@', sep + 3);
  if (at != std::string_view::npos && at < url.find('/', sep + 3))
    return make_error(error::invalid_config,
      "bad URL '" + std::string{url.substr(0, sep + 3)} + "...@"
        + std::string{url.substr(at + 1)}
        + "': credentials do not go in the URL; name the variable that "
          "holds the key in api_key_env");
  result.scheme = lower(std::string{url.substr(0, sep)});
  if (result.scheme != "http" && result.scheme != "https")
    return fail("the scheme must be http or https");
  auto rest = url.substr(sep + 3);
  auto slash = rest.find('/');
  auto authority = rest.substr(0, slash);
  if (slash != std::string_view::npos)
    result.path = std::string{rest.substr(slash)};
  while (!result.path.empty() && result.path.back() == '/')
    result.path.pop_back();
  auto colon = authority.rfind(':');
  if (colon != std::string_view::npos
      && authority.find(']', colon) == authority.npos) {
    auto port = authority.substr(colon + 1);
    if (port.empty() || port.size() > 5
        || !std::all_of(port.begin(), port.end(), ::isdigit)
        || std::stoul(std::string{port}) > 65535
        || std::stoul(std::string{port}) == 0)
      return fail("bad port '" + std::string{port} + "'");
    result.port = static_cast<uint16_t>(std::stoul(std::string{port}));
    authority = authority.substr(0, colon);
  } else {
    result.port = result.scheme == "https" ? 443 : 80;
  }
  if (authority.size() >= 2 && authority.front() == '['
      && authority.back() == ']')
    authority = authority.substr(1, authority.size() - 2);
  if (authority.empty())
    return fail("no host");
  result.host = std::string{authority};
  return result;
}

caf::expected<void> check_tcp_connect(
  const std::string& host, uint16_t port, std::chrono::milliseconds timeout) {
  auto h = make_handle();
  if (!h)
    return make_error(error::agent_failed, "curl_easy_init failed");
  auto bracketed
    = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  auto url = "http://" + bracketed + ":" + std::to_string(port) + "/";
  char detail[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(h.get(), CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h.get(), CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(
    h.get(), CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout.count()));
  auto rc = curl_easy_perform(h.get());
  if (rc == CURLE_OK)
    return {};
  long os_errno = 0;
  curl_easy_getinfo(h.get(), CURLINFO_OS_ERRNO, &os_errno);
  std::string why = os_errno != 0 ? std::strerror(static_cast<int>(os_errno))
                    : rc == CURLE_OPERATION_TIMEDOUT ? "timed out"
                                                     : curl_easy_strerror(rc);
  return make_error(error::agent_failed, "cannot connect to " + host + ":"
                                           + std::to_string(port) + " (" + why
                                           + ")");
}

} // namespace eat
