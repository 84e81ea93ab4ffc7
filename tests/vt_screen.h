// A VT100-compatible terminal screen for tests, on libvterm (Debian's
// libvterm-dev, the emulator inside Neovim): bytes a program wrote go in, the
// rows a person would see come out, with the rows that scrolled off the top
// kept as scrollback. Like xterm, it does not rewrap lines on a resize.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include <vterm.h>
}

namespace tpu::test_support {

class VtScreen {
 public:
  VtScreen(int rows, int columns) : rows_(rows), columns_(columns) {
    vt_ = vterm_new(rows, columns);
    vterm_set_utf8(vt_, 1);
    screen_ = vterm_obtain_screen(vt_);
    callbacks_ = {};
    callbacks_.sb_pushline = &VtScreen::PushLine;
    vterm_screen_set_callbacks(screen_, &callbacks_, this);
    vterm_screen_reset(screen_, 1);
  }
  ~VtScreen() { vterm_free(vt_); }
  VtScreen(const VtScreen&) = delete;
  VtScreen& operator=(const VtScreen&) = delete;

  void Write(const std::string& bytes) { vterm_input_write(vt_, bytes.data(), bytes.size()); }
  // What a terminal window does when it is resized: no reflow.
  void Resize(int rows, int columns) {
    rows_ = rows;
    columns_ = columns;
    vterm_set_size(vt_, rows, columns);
  }
  int columns() const { return columns_; }

  // The visible rows, trailing blanks trimmed.
  std::vector<std::string> Rows() const {
    std::vector<std::string> out;
    for (int r = 0; r < rows_; ++r) out.push_back(Row(r));
    return out;
  }
  // Scrollback (oldest first), then the visible rows.
  std::vector<std::string> AllRows() const {
    std::vector<std::string> out = scrollback_;
    for (const auto& r : Rows()) out.push_back(r);
    return out;
  }
  // True when something is written in the last column of visible row `r`:
  // a line that long has wrapped, or is about to.
  bool LastColumnUsed(int r) const {
    VTermScreenCell cell;
    vterm_screen_get_cell(screen_, VTermPos{r, columns_ - 1}, &cell);
    return cell.chars[0] != 0 && cell.chars[0] != ' ';
  }

 private:
  std::string Row(int r) const {
    std::string out;
    for (int c = 0; c < columns_; ++c) {
      VTermScreenCell cell;
      vterm_screen_get_cell(screen_, VTermPos{r, c}, &cell);
      AppendCell(cell, &out);
      if (cell.width > 1) c += cell.width - 1;
    }
    return Trim(out);
  }
  static void AppendCell(const VTermScreenCell& cell, std::string* out) {
    uint32_t cp = cell.chars[0] ? cell.chars[0] : ' ';
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xc0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xe0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      *out += static_cast<char>(0xf0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  static std::string Trim(std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  }
  static int PushLine(int cols, const VTermScreenCell* cells, void* user) {
    auto* self = static_cast<VtScreen*>(user);
    std::string row;
    for (int c = 0; c < cols; ++c) AppendCell(cells[c], &row);
    self->scrollback_.push_back(Trim(row));
    return 1;
  }

  int rows_, columns_;
  VTerm* vt_;
  VTermScreen* screen_;
  VTermScreenCallbacks callbacks_;
  std::vector<std::string> scrollback_;
};

}  // namespace tpu::test_support
