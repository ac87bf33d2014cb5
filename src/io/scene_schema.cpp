#include "scene_schema.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <stdexcept>

#include "moreau/core/error.hpp"

namespace moreau::scene_io {

Schema makeSchema(const std::vector<KeySpec>& extraKeys) {
    Schema s;
    s.fixed = fixedRules();
    s.dynamic = dynamicRules();
    for (const KeySpec& k : extraKeys) {
        const auto dot = k.key.find('.');
        if (dot == std::string::npos || dot == 0 || dot + 1 == k.key.size() ||
            k.key.find('.', dot + 1) != std::string::npos || !isSectionName(k.key.substr(0, dot)) ||
            !isSectionName(k.key.substr(dot + 1)))
            throw std::logic_error("extra scene key '" + k.key + "' is not of the form section.key");
        if (s.dynamic.count(k.key.substr(0, dot)))
            throw std::logic_error("extra scene key '" + k.key + "' uses a built-in dynamic section");
        if (k.type == KeyType::Choice && k.choices.empty())
            throw std::logic_error("extra scene key '" + k.key + "' is a choice without choices");
        Rule r;
        r.spec = k;
        s.fixed.push_back(r);
    }
    for (std::size_t i = 0; i < s.fixed.size(); ++i) {
        if (!s.index.emplace(s.fixed[i].spec.key, i).second)
            throw std::logic_error("scene key '" + s.fixed[i].spec.key + "' is declared twice");
    }
    // Defaults of extra keys must pass their own validation (a programming error otherwise).
    for (std::size_t i = s.fixed.size() - extraKeys.size(); i < s.fixed.size(); ++i) {
        try {
            checkValue(s.fixed[i], s.fixed[i].spec.key, s.fixed[i].spec.defaultValue, "extra key default");
        } catch (const InputError& e) {
            throw std::logic_error(e.what());
        }
    }
    return s;
}

// ---------------------------------------------------------------------------
// Validation of one value

namespace {

std::string rangeText(const KeySpec& s, const char* noun) {
    // Integer bounds read better without an exponent (1e8 → 100000000).
    const bool integer = s.type == KeyType::Integer;
    auto num = [integer](double x) {
        return integer && std::abs(x) < 1e15 ? std::to_string(static_cast<long long>(x)) : formatNumber(x);
    };
    std::string t = noun;
    const bool hasMin = s.min > -kInf, hasMax = s.max < kInf;
    if (hasMin && hasMax)
        t += std::string(" in ") + (s.minExclusive ? "(" : "[") + num(s.min) + ", " + num(s.max) + "]";
    else if (hasMin)
        t += (s.minExclusive ? " > " : " >= ") + num(s.min);
    else if (hasMax)
        t += " <= " + num(s.max);
    return t;
}

}  // namespace

std::string allowedText(const Rule& rule) {
    const KeySpec& s = rule.spec;
    std::string t;
    switch (rule.special) {
    case Special::Axes: t = "a subset of xyz"; break;
    case Special::GrainList: t = "first, last, all or a comma list of grain indices and ranges i..j"; break;
    case Special::Box: t = "six numbers 'xmin ymin zmin xmax ymax zmax'"; break;
    case Special::Counts: t = "two or three positive integers 'nx ny [nz]'"; break;
    case Special::None:
        switch (s.type) {
        case KeyType::Real: t = rangeText(s, "real"); break;
        case KeyType::Integer: t = rangeText(s, "integer"); break;
        case KeyType::Bool: t = "true or false (also 1/0, yes/no, on/off)"; break;
        case KeyType::Choice: {
            for (std::size_t i = 0; i < s.choices.size(); ++i) t += (i ? "|" : "") + s.choices[i];
            break;
        }
        case KeyType::Vector: t = "three numbers 'x y z'"; break;
        case KeyType::Text: t = "text"; break;
        }
        break;
    }
    if (rule.allowInfinity) t += ", or inf/never";
    if (s.defaultValue.empty() && s.type != KeyType::Text) t += ", or empty";
    return t;
}

[[noreturn]] void failValue(const std::string& origin, const std::string& key, const std::string& value,
                            const std::string& what, const std::string& allowed) {
    throw InputError(origin + ": key '" + shown(key) + "': '" + shown(value, 200) + "' " + what + " (allowed: " + allowed + ")");
}

namespace {

bool inRange(const KeySpec& s, double x) {
    if (s.minExclusive ? !(x > s.min) : !(x >= s.min)) return false;
    return x <= s.max;
}

}  // namespace

/// Checks `value` against the rule; returns the text stored in Scene::values
/// (booleans as true/false, vectors space separated, otherwise as given).
std::string checkValue(const Rule& rule, const std::string& key, const std::string& value, const std::string& origin) {
    const KeySpec& s = rule.spec;
    // An empty default means "unset, derived from another key" and may be restated.
    if (value.empty() && s.defaultValue.empty()) return value;
    auto fail = [&](const std::string& what) { failValue(origin, key, value, what, allowedText(rule)); };

    switch (rule.special) {
    case Special::Axes: {
        std::set<char> seen;
        for (char c : value)
            if ((c != 'x' && c != 'y' && c != 'z') || !seen.insert(c).second) fail("is not a subset of xyz");
        return value;
    }
    case Special::GrainList: {
        if (trim(value).empty()) return value;
        for (const std::string& item : splitList(value)) {
            if (item == "first" || item == "last" || item == "all") continue;
            const auto range = item.find("..");
            for (const std::string& end : range == std::string::npos
                                               ? std::vector<std::string>{item}
                                               : std::vector<std::string>{trim(item.substr(0, range)),
                                                                          trim(item.substr(range + 2))}) {
                const auto n = parseInteger(end);
                if (!n || !n->exact) fail("is not a grain selection");
            }
        }
        return value;
    }
    case Special::Box: {
        const auto words = splitWords(value, true);
        if (value.empty()) return value;
        if (words.size() != 6) fail("is not six numbers");
        std::string canonical;
        for (const std::string& w : words) {
            const auto x = parseDouble(w);
            if (!x || !std::isfinite(*x)) fail("is not six finite numbers");
            canonical += (canonical.empty() ? "" : " ") + formatNumber(*x);
        }
        return canonical;
    }
    case Special::Counts: {
        const auto words = splitWords(value, true);
        if (words.size() < 2 || words.size() > 3) fail("is not two or three counts");
        std::string canonical;
        for (const std::string& w : words) {
            const auto n = parseInteger(w);
            if (!n || !n->exact || *n->exact < 1 || n->approx > kMaxGrains) fail("is not a list of positive integers");
            if (!canonical.empty()) canonical += ' ';
            canonical += std::to_string(*n->exact);
        }
        return canonical;
    }
    case Special::None: break;
    }

    switch (s.type) {
    case KeyType::Real: {
        if (isInfinityWord(value)) {
            if (rule.allowInfinity) return "inf";
            fail("is not a finite number");
        }
        const auto x = parseDouble(value);
        if (!x || std::isnan(*x)) fail("is not a number");
        if (!std::isfinite(*x)) fail("is not a finite number");
        if (!inRange(s, *x)) fail("is out of range");
        return value;
    }
    case KeyType::Integer: {
        const auto n = parseInteger(value);
        if (!n) fail("is not an integer");
        if (!inRange(s, n->approx) || (!n->exact && !n->exactUnsigned)) fail("is out of range");
        return value;
    }
    case KeyType::Bool: {
        const auto b = parseBool(value);
        if (!b) fail("is not a boolean");
        return *b ? "true" : "false";
    }
    case KeyType::Choice:
        if (std::find(s.choices.begin(), s.choices.end(), value) == s.choices.end()) fail("is not allowed");
        return value;
    case KeyType::Vector: {
        const auto v = parseVector(value);
        if (!v) fail("is not a vector of three numbers");
        std::string canonical;
        for (const std::string& w : splitWords(value, true)) canonical += (canonical.empty() ? "" : " ") + w;
        return canonical;
    }
    case KeyType::Text: return value;
    }
    return value;
}

// ---------------------------------------------------------------------------
// Reference text

namespace {

std::string wrap(const std::string& text, const std::string& indent, std::size_t width) {
    std::string out, line;
    for (const std::string& w : splitWords(text, false)) {
        if (!line.empty() && indent.size() + line.size() + 1 + w.size() > width) {
            out += indent + line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + w;
    }
    if (!line.empty()) out += indent + line + "\n";
    return out;
}

void appendKey(std::string& out, const std::string& key, const Rule& r) {
    const std::string& d = r.spec.defaultValue;
    out += key + " = " + (d.empty() ? std::string("\"\"") : d) + "\n";
    out += "    allowed: " + allowedText(r) + "\n";
    out += wrap(r.spec.description, "    ", 79);
}

}  // namespace

std::string referenceText(const Schema& schema) {
    std::string out =
        "Scene keys. A scene file has [section] headers and 'key = value' lines; '#'\n"
        "starts a comment. On the command line, --set section.key=value overrides the\n"
        "file. Every key has a default. Vectors are three numbers \"x y z\" (commas\n"
        "allowed). Sections [force.NAME], [wall.NAME] and [group.NAME] may appear any\n"
        "number of times, NAME of letters, digits and '_'.\n";
    std::string section;
    for (const Rule& r : schema.fixed) {
        const std::string s = r.spec.key.substr(0, r.spec.key.find('.'));
        if (s != section) {
            section = s;
            out += "\n[" + section + "]\n";
        }
        appendKey(out, r.spec.key, r);
    }
    for (const char* dyn : {"force", "wall", "group"}) {
        out += std::string("\n[") + dyn + ".NAME]\n";
        for (const Rule& r : schema.dynamic.at(dyn)) appendKey(out, std::string(dyn) + ".NAME." + r.spec.key, r);
    }
    return out;
}

// ---------------------------------------------------------------------------
// Key lookup

namespace {
template <class Candidates>
std::string closest(const std::string& word, const Candidates& candidates);
}  // namespace

std::string referenceText(const Schema& schema, const std::string& topic) {
    std::string t = topic;
    if (t.size() >= 2 && t.front() == '[' && t.back() == ']') t = t.substr(1, t.size() - 2);
    std::string out;
    // A fixed section or key.
    for (const Rule& r : schema.fixed) {
        const std::string& key = r.spec.key;
        if (key == t || key.substr(0, key.find('.')) == t) {
            if (out.empty() && key != t) out += "[" + t + "]\n";
            appendKey(out, key, r);
        }
    }
    if (!out.empty()) return out;
    // A dynamic section ("wall", "wall.NAME", "wall.floor") or one of its keys.
    for (const auto& [dyn, rules] : schema.dynamic) {
        if (t != dyn && !t.starts_with(dyn + ".")) continue;
        const std::string rest = t == dyn ? "" : t.substr(dyn.size() + 1);  // "NAME", "floor", "NAME.mu", "floor.mu"
        const std::size_t dot = rest.find('.');
        const std::string name = rest.empty() ? "NAME" : rest.substr(0, dot);
        const std::string key = dot == std::string::npos ? "" : rest.substr(dot + 1);
        for (const Rule& r : rules)
            if (key.empty() || r.spec.key == key) appendKey(out, dyn + "." + name + "." + r.spec.key, r);
        if (!out.empty()) return (key.empty() ? "[" + dyn + "." + name + "]\n" : std::string()) + out;
    }
    std::vector<std::string> candidates;
    for (const Rule& r : schema.fixed) {
        candidates.push_back(r.spec.key);
        candidates.push_back(r.spec.key.substr(0, r.spec.key.find('.')));
    }
    for (const auto& [dyn, rules] : schema.dynamic) {
        candidates.push_back(dyn);
        for (const Rule& r : rules) candidates.push_back(dyn + ".NAME." + r.spec.key);
    }
    const std::string best = closest(t, candidates);
    throw InputError("moreau run --help " + topic + ": no key or section of that name" +
                     (best.empty() ? std::string() : " (did you mean '" + best + "'?)") +
                     "; allowed: a key such as md.kn or wall.NAME.mu, or a section such as md or wall (moreau run "
                     "--help lists them all)");
}

namespace {

/// Words longer than this get no suggestion: no key is that long, and the
/// distance costs the product of the lengths.
constexpr std::size_t kMaxSuggested = 100;

/// The candidate nearest to `word` in edit distance, if within max(2, size / 4); else "".
template <class Candidates>
std::string closest(const std::string& word, const Candidates& candidates) {
    std::string best;
    if (word.size() > kMaxSuggested) return best;
    std::size_t bestDistance = std::max<std::size_t>(2, word.size() / 4) + 1;
    for (const std::string& c : candidates) {
        // The distance is at least the difference of the lengths.
        const std::size_t lengthGap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
        if (lengthGap >= bestDistance) continue;
        const std::size_t d = editDistance(word, c);
        if (d < bestDistance) {
            bestDistance = d;
            best = c;
        }
    }
    return best;
}

std::string suggestionFor(const Schema& schema, const std::string& key) {
    if (key.size() > kMaxSuggested) return "";
    std::vector<std::string> candidates;
    for (const Rule& r : schema.fixed) candidates.push_back(r.spec.key);
    // Dynamic keys: complete with the NAME the user wrote, if any.
    for (const auto& [section, rules] : schema.dynamic) {
        std::string name = "NAME";
        if (key.rfind(section + ".", 0) == 0) {
            const std::string rest = key.substr(section.size() + 1);
            const auto dot = rest.rfind('.');
            if (dot != std::string::npos) name = rest.substr(0, dot);
        }
        for (const Rule& r : rules) candidates.push_back(section + "." + name + "." + r.spec.key);
    }
    // A key without a section, e.g. `iterations` above the first header.
    if (key.find('.') == std::string::npos) {
        for (const std::string& c : candidates)
            if (c.size() > key.size() && c.compare(c.size() - key.size() - 1, std::string::npos, "." + key) == 0)
                return c;
    }
    return closest(key, candidates);
}

[[noreturn]] void failUnknown(const Schema& schema, const std::string& key, const std::string& origin) {
    const std::string suggestion = suggestionFor(schema, key);
    if (!suggestion.empty())
        throw InputError(origin + ": unknown key '" + shown(key) + "' (did you mean '" + suggestion + "'?)");
    // The keys of an experiment or bench are its own: list them rather than
    // point at `moreau run --help`, which does not show them.
    const auto dot = key.find('.');
    const std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
    if (section == "experiment" || section == "bench") {
        std::string text, allowed;
        for (const Rule& r : schema.fixed)
            if (r.spec.key.rfind(section + ".", 0) == 0) {
                appendKey(text, r.spec.key, r);
                allowed += (allowed.empty() ? "" : ", ") + r.spec.key;
            }
        if (key == section + ".key_reference")
            throw KeyReferenceRequest(text.empty() ? "(no " + section + ".* keys)\n" : text);
        throw InputError(origin + ": unknown key '" + shown(key) + "' (" +
                         (allowed.empty() ? "this one takes no " + section + ".* keys" : "allowed: " + allowed) + ")");
    }
    throw InputError(origin + ": unknown key '" + shown(key) + "' (see 'moreau run --help' for the keys)");
}

[[noreturn]] void failUnnamed(const std::string& origin, const std::string& what, const std::string& section) {
    throw InputError(origin + ": " + what + " needs a named section: [" + section + ".NAME] (e.g. [" + section +
                     (section == "force" ? ".push" : section == "group" ? ".plate" : ".floor") + "]), NAME of letters, digits and '_'");
}

[[noreturn]] void failSectionName(const std::string& origin, const std::string& what, const std::string& section,
                                  const std::string& name) {
    throw InputError(origin + ": " + what + "bad section name '" + section + "." + shown(name) + "' (allowed: " + section +
                     ".NAME, NAME of letters, digits and '_')");
}

}  // namespace

/// Checks a `[header]` of the file; returns (dynamic section, NAME) for
/// [force.NAME], [wall.NAME] and [group.NAME], nothing for fixed sections.
std::optional<std::pair<std::string, std::string>> checkSection(const Schema& schema, const std::string& section,
                                                                const std::string& origin) {
    std::set<std::string> fixedSections;
    for (const Rule& r : schema.fixed) fixedSections.insert(r.spec.key.substr(0, r.spec.key.find('.')));
    if (fixedSections.count(section)) return std::nullopt;
    const auto dot = section.find('.');
    const std::string head = section.substr(0, dot);
    if (schema.dynamic.count(head)) {
        if (dot == std::string::npos) failUnnamed(origin, "section [" + shown(section) + "]", head);
        const std::string name = section.substr(dot + 1);
        if (!isSectionName(name)) failSectionName(origin, "", head, name);
        return std::make_pair(head, name);
    }
    const std::string best = closest(section, fixedSections);
    throw InputError(origin + ": unknown section [" + shown(section) + "]" +
                     (best.empty() ? std::string(" (see 'moreau run --help' for the sections)")
                                   : " (did you mean [" + best + "]?)"));
}

Resolved resolveKey(const Schema& schema, const std::string& key, const std::string& origin) {
    Resolved res;
    if ((res.rule = schema.findFixed(key))) return res;
    const auto dot = key.find('.');
    if (dot != std::string::npos) {
        const std::string section = key.substr(0, dot);
        const auto dyn = schema.dynamic.find(section);
        if (dyn != schema.dynamic.end()) {
            const std::string rest = key.substr(dot + 1);
            const auto last = rest.rfind('.');
            if (last == std::string::npos) failUnnamed(origin, "key '" + shown(key) + "'", section);
            const std::string name = rest.substr(0, last);
            if (!isSectionName(name)) failSectionName(origin, "key '" + shown(key) + "': ", section, name);
            res.rule = Schema::findIn(dyn->second, rest.substr(last + 1));
            if (!res.rule) failUnknown(schema, key, origin);
            res.dynamicSection = section;
            res.name = name;
            return res;
        }
    }
    failUnknown(schema, key, origin);
}

// ---------------------------------------------------------------------------
// A scene's values

SceneValues collectValues(const Schema& schema, const IniContent& ini, const std::string& origin,
                          const std::vector<std::string>& sets) {
    SceneValues out;
    Values& v = out.values;
    auto& instances = out.instances;  // "force" → names

    for (const auto& [section, line] : ini.sections)
        if (const auto dynamic = checkSection(schema, section, origin + ":" + std::to_string(line)))
            instances[dynamic->first].insert(dynamic->second);

    auto give = [&](const std::string& key, const std::string& value, const std::string& from) {
        const Resolved r = resolveKey(schema, key, from);
        v.entries[key] = {checkValue(*r.rule, key, value, from), from};
        if (!r.dynamicSection.empty()) instances[r.dynamicSection].insert(r.name);
    };

    std::map<std::string, long> seen;
    for (const IniLine& e : ini.entries) {
        const std::string where = origin + ":" + std::to_string(e.line);
        if (const auto [it, fresh] = seen.emplace(e.key, e.line); !fresh)
            throw InputError(where + ": key '" + shown(e.key) + "' is given twice (first on line " +
                             std::to_string(it->second) + ")");
        give(e.key, e.value, where);
    }
    for (const std::string& set : sets) {
        const auto eq = set.find('=');
        const std::string key = eq == std::string::npos ? std::string() : trim(set.substr(0, eq));
        if (eq == std::string::npos || key.empty())
            throw InputError("--set: malformed '" + shown(set) + "' (expected section.key=value, e.g. cd.iterations=80)");
        give(key, unquote(trim(set.substr(eq + 1))), "--set");
    }

    // Defaults of everything not given; derived defaults of dynamic keys.
    for (const Rule& r : schema.fixed)
        if (!v.entries.count(r.spec.key)) v.entries[r.spec.key] = {r.spec.defaultValue, origin};
    for (const auto& [section, names] : instances)
        for (const std::string& name : names)
            for (const Rule& r : schema.dynamic.at(section)) {
                const std::string key = section + "." + name + "." + r.spec.key;
                if (!v.entries.count(key)) v.entries[key] = {r.spec.defaultValue, origin};
            }
    auto derive = [&](const std::string& key, const std::string& from) {
        Entry& e = v.entries.at(key);
        if (e.text.empty()) e = v.entries.at(from);
    };
    for (const std::string& name : instances["force"]) derive("force." + name + ".value_after", "force." + name + ".value");
    for (const std::string& name : instances["wall"]) {
        derive("wall." + name + ".mu", "contact.mu");
        derive("wall." + name + ".force_after", "wall." + name + ".force");
    }
    return out;
}

}  // namespace moreau::scene_io
