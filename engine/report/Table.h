// The one table renderer of every report: aligned text with a total row, or the same rows as JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strobe {

// A minimal JSON writer: values are kept as already-encoded text, so rows can carry them.
namespace json {
std::string quote(std::string_view text);
std::string number(uint64_t value);
// Rounded to `decimals` places; NaN and infinities become null.
std::string number(double value, int decimals);
std::string array(std::span<const std::string> encoded);

class Object {
public:
  Object &add(std::string_view key, std::string encoded);
  Object &merge(const Object &other);
  bool empty() const { return members_.empty(); }
  std::string str() const;

private:
  std::vector<std::pair<std::string, std::string>> members_;
};
} // namespace json

struct Cell {
  std::string text; // as the table shows it
  std::string json; // encoded JSON value for the column's key; empty: no such key in the row
};

class Table {
public:
  enum class Align { Left, Right };
  struct Column {
    std::string header;
    std::string key; // JSON key of the column's cells
    Align align = Align::Right;
  };
  struct Row {
    std::vector<Cell> cells;   // one per column
    json::Object extra;        // JSON-only members (full paths, nested objects)
    std::vector<Row> children; // shown under the row; in JSON, an array under childrenKey
    // A summary line the text needs but JSON gives elsewhere (as an extra of the parent row).
    bool textOnly = false;
  };

  explicit Table(std::vector<Column> columns, std::string childrenKey = {});

  void add(Row row) { rows_.push_back(std::move(row)); }
  // The rows a report left out (beyond its top N), summed: shown last in the text, and under
  // "others" in JSON, where "rows" hold only real rows.
  void setOthers(Row row) { others_ = std::move(row); }
  void setTotal(Row row) { total_ = std::move(row); }

  // Header, rows, a rule, then the total row; columns are two spaces apart, no trailing blanks.
  std::string text() const;
  // Adds "rows", then "others" and "total" when set, to `doc`.
  void addJson(json::Object &doc) const;

private:
  std::string jsonRow(const Row &row) const;

  std::vector<Column> columns_;
  std::string childrenKey_;
  std::vector<Row> rows_;
  std::optional<Row> others_;
  std::optional<Row> total_;
};

} // namespace strobe
