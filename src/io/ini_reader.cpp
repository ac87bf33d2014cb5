#include "ini_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "moreau/core/error.hpp"

namespace moreau::scene_io {

// ---------------------------------------------------------------------------
// Tokens: the words of a value

std::string trim(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// Drops one pair of surrounding double quotes: `file = ""` is the empty text.
std::string unquote(std::string s) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
    return s;
}

std::vector<std::string> splitWords(std::string_view s, bool commasToo) {
    std::vector<std::string> words;
    std::string cur;
    for (char c : s) {
        if (std::isspace(static_cast<unsigned char>(c)) || (commasToo && c == ',')) {
            if (!cur.empty()) words.push_back(std::move(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) words.push_back(std::move(cur));
    return words;
}

std::vector<std::string> splitList(std::string_view s) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = s.find(',', start);
        items.push_back(trim(s.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                              : comma - start)));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return items;
}

std::string formatNumber(double x) {
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, r.ptr);
}

/// Whole-string number; accepts a leading '+'. May return inf or nan.
std::optional<double> parseDouble(std::string_view s) {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    double x = 0.0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    return x;
}

std::optional<IntegerValue> parseInteger(std::string_view s) {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    if (s.empty()) return std::nullopt;
    IntegerValue v;
    long long x = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), x);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
        v.approx = static_cast<double>(x);
        v.exact = x;
        if (x >= 0) v.exactUnsigned = static_cast<unsigned long long>(x);
        return v;
    }
    if (r.ec == std::errc::result_out_of_range && s.front() != '-') {
        unsigned long long u = 0;
        auto ru = std::from_chars(s.data(), s.data() + s.size(), u);
        if (ru.ec == std::errc() && ru.ptr == s.data() + s.size()) {
            v.approx = static_cast<double>(u);
            v.exactUnsigned = u;
            return v;
        }
        // Too large even for 64 bits: all digits, but out of range.
        if (std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
            v.approx = kInf;
            return v;
        }
    }
    if (r.ec == std::errc::result_out_of_range && s.front() == '-') {
        v.approx = -kInf;
        return v;
    }
    return std::nullopt;
}

std::optional<Vec3> parseVector(std::string_view s) {
    const auto words = splitWords(s, true);
    if (words.size() != 3) return std::nullopt;
    Vec3 v;
    for (int k = 0; k < 3; ++k) {
        const auto x = parseDouble(words[static_cast<std::size_t>(k)]);
        if (!x || !std::isfinite(*x)) return std::nullopt;
        v[k] = *x;
    }
    return v;
}

std::optional<bool> parseBool(const std::string& s) {
    const std::string l = lower(s);
    if (l == "true" || l == "1" || l == "yes" || l == "on") return true;
    if (l == "false" || l == "0" || l == "no" || l == "off") return false;
    return std::nullopt;
}

bool isInfinityWord(const std::string& s) {
    const std::string l = lower(s);
    return l == "inf" || l == "+inf" || l == "infinity" || l == "never";
}

/// `text` for an error message: at most `limit` bytes (cut at a UTF-8
/// character boundary), then "…" and the whole length. A key or value of a
/// megabyte must not come back as a megabyte of message.
std::string shown(std::string_view text, std::size_t limit) {
    if (text.size() <= limit) return std::string(text);
    std::size_t cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text.substr(0, cut)) + "… (" + std::to_string(text.size()) + " bytes)";
}

/// Optimal string alignment distance (Levenshtein plus adjacent swaps), for
/// "did you mean" suggestions.
std::size_t editDistance(const std::string& a, const std::string& b) {
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
    for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[n][m];
}

bool isSectionName(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// ---------------------------------------------------------------------------
// Lines: sections and keys

/// "wall.a .normal" → "wall.a.normal": Boost keeps blanks inside "[ wall.a ]".
std::string normaliseKey(const std::string& key) {
    std::string out;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = key.find('.', start);
        out += trim(std::string_view(key).substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) break;
        out += '.';
        start = dot + 1;
    }
    return out;
}

/// Parses `[section]` headers and `key = value` lines ('#' starts a comment,
/// blank lines are skipped, a UTF-8 byte order mark at the start is
/// dropped); every error names the line.
IniContent parseIni(std::string_view text, const std::string& origin) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    IniContent ini;
    std::string section;
    long lineNumber = 0;
    while (!text.empty()) {
        ++lineNumber;
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        const std::string t = trim(line);
        if (t.empty()) continue;
        const std::string where = origin + ":" + std::to_string(lineNumber);
        if (t.front() == '[') {
            if (t.back() != ']') throw InputError(where + ": '" + shown(t) + "' is not a section header (allowed: [name])");
            section = normaliseKey(t.substr(1, t.size() - 2));
            if (section.empty()) throw InputError(where + ": empty section header '" + shown(t) + "'");
            ini.sections.emplace_back(section, lineNumber);
            continue;
        }
        const std::size_t eq = t.find('=');
        if (eq == std::string::npos)
            throw InputError(where + ": '" + shown(t) + "' is neither a [section] header nor a 'key = value' line");
        const std::string key = trim(std::string_view(t).substr(0, eq));
        if (key.empty()) throw InputError(where + ": '" + shown(t) + "' has no key before '='");
        ini.entries.push_back({normaliseKey(section.empty() ? key : section + "." + key),
                               unquote(trim(std::string_view(t).substr(eq + 1))), lineNumber});
    }
    return ini;
}

/// Scene files are read up to this size: a scene is a page of keys, and a
/// device such as /dev/zero would otherwise be read for ever.
constexpr std::size_t kMaxSceneBytes = std::size_t{4} << 20;

std::string readSceneFile(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError("cannot read scene file '" + path + "': a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("cannot read scene file '" + path + "'");
    std::string text(kMaxSceneBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (in.bad()) throw InputError("cannot read scene file '" + path + "'");
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxSceneBytes)
        throw InputError("scene file '" + path + "': larger than " + std::to_string(kMaxSceneBytes >> 20) +
                         " MiB (allowed: a scene of keys; packings go in packing.file)");
    if (text.find('\0') != std::string::npos)
        throw InputError("scene file '" + path + "': holds a NUL byte (allowed: text)");
    return text;
}

}  // namespace moreau::scene_io
