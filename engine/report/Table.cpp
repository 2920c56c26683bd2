#include "report/Table.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace strobe {

namespace json {

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20)
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
      else
        out += c;
    }
  }
  return out + "\"";
}

std::string number(uint64_t value) { return fmt::format("{}", value); }

std::string number(double value, int decimals) {
  if (!std::isfinite(value))
    return "null";
  return fmt::format("{:.{}f}", value, decimals);
}

std::string array(std::span<const std::string> encoded) {
  return fmt::format("[{}]", fmt::join(encoded, ","));
}

Object &Object::add(std::string_view key, std::string encoded) {
  members_.emplace_back(std::string(key), std::move(encoded));
  return *this;
}

Object &Object::merge(const Object &other) {
  members_.insert(members_.end(), other.members_.begin(), other.members_.end());
  return *this;
}

std::string Object::str() const {
  std::string out = "{";
  for (const auto &[key, value] : members_) {
    if (out.size() > 1)
      out += ',';
    out += quote(key) + ':' + value;
  }
  return out + "}";
}

} // namespace json

namespace {

// Terminal columns of UTF-8 text ("±" is two bytes, one column); reports hold no wide characters.
size_t displayWidth(std::string_view text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

void rtrim(std::string &line) { line.erase(line.find_last_not_of(' ') + 1); }

} // namespace

Table::Table(std::vector<Column> columns, std::string childrenKey)
    : columns_(std::move(columns)), childrenKey_(std::move(childrenKey)) {}

std::string Table::text() const {
  std::vector<size_t> widths;
  for (const Column &column : columns_)
    widths.push_back(displayWidth(column.header));
  auto measure = [&](const Row &row, auto &self) -> void {
    for (size_t i = 0; i < row.cells.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], displayWidth(row.cells[i].text));
    for (const Row &child : row.children)
      self(child, self);
  };
  for (const Row &row : rows_)
    measure(row, measure);
  if (others_)
    measure(*others_, measure);
  if (total_)
    measure(*total_, measure);

  auto line = [&](auto cellText) {
    std::string out;
    for (size_t i = 0; i < columns_.size(); ++i) {
      std::string_view text = cellText(i);
      std::string pad(widths[i] - std::min(widths[i], displayWidth(text)), ' ');
      if (i > 0)
        out += "  ";
      out += columns_[i].align == Align::Right ? pad + std::string(text) : std::string(text) + pad;
    }
    rtrim(out);
    return out + '\n';
  };
  auto rowLine = [&](const Row &row) {
    return line([&](size_t i) -> std::string_view {
      return i < row.cells.size() ? std::string_view(row.cells[i].text) : std::string_view();
    });
  };

  std::string header = line([&](size_t i) -> std::string_view { return columns_[i].header; });
  std::string out = header;
  auto emit = [&](const Row &row, auto &self) -> void {
    out += rowLine(row);
    for (const Row &child : row.children)
      self(child, self);
  };
  for (const Row &row : rows_)
    emit(row, emit);
  if (others_)
    emit(*others_, emit);
  if (total_) {
    out += std::string(displayWidth(header) - 1, '-') + '\n'; // the header ends in '\n'
    out += rowLine(*total_);
  }
  return out;
}

std::string Table::jsonRow(const Row &row) const {
  json::Object object;
  for (size_t i = 0; i < row.cells.size() && i < columns_.size(); ++i)
    if (!row.cells[i].json.empty() && !columns_[i].key.empty())
      object.add(columns_[i].key, row.cells[i].json);
  object.merge(row.extra);
  if (!childrenKey_.empty() && !row.children.empty()) {
    std::vector<std::string> children;
    for (const Row &child : row.children)
      if (!child.textOnly)
        children.push_back(jsonRow(child));
    object.add(childrenKey_, json::array(children));
  }
  return object.str();
}

void Table::addJson(json::Object &doc) const {
  std::vector<std::string> rows;
  for (const Row &row : rows_)
    if (!row.textOnly)
      rows.push_back(jsonRow(row));
  doc.add("rows", json::array(rows));
  if (others_)
    doc.add("others", jsonRow(*others_));
  if (total_)
    doc.add("total", jsonRow(*total_));
}

} // namespace strobe
