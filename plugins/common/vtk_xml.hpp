// SPDX-License-Identifier: BSD-3-Clause
// What the observers that write VTK XML files share (plugins vtk and grid_fields): atomic, compressed
// appended-binary writes with VTK's errors in the exception, and the .pvd collection of a series.
// Header-only: each plugin is its own library.
#pragma once

#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkDataObject.h>
#include <vtkErrorCode.h>
#include <vtkDoubleArray.h>
#include <vtkExecutive.h>
#include <vtkFieldData.h>
#include <vtkNew.h>
#include <vtkTypeInt64Array.h>
#include <vtkXMLWriter.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "pardyn/core.hpp"
#include "pardyn/output.hpp"

namespace pardyn::plugins::vtk_xml {

// Shortest text that reads back to the same double: times in a .pvd must match the simulation's.
inline std::string format_double(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// VTK reports failures through its output window; an ErrorEvent observer turns them into a message
// we can put into the exception instead of a line on stderr that nobody connects with the failure.
class ErrorCatcher {
 public:
  explicit ErrorCatcher(vtkObject* obj) {
    cb_->SetClientData(&message_);
    cb_->SetCallback([](vtkObject*, unsigned long, void* client, void* call) {
      auto* msg = static_cast<std::string*>(client);
      if (!msg->empty()) *msg += "; ";
      *msg += call ? essence(static_cast<const char*>(call)) : "unknown VTK error";
    });
    obj->AddObserver(vtkCommand::ErrorEvent, cb_);
  }
  const std::string& message() const { return message_; }

 private:
  // VTK's text is "ERROR: In file.cxx, line N\nvtkClass (0x...): what happened\n\n": keep only
  // what happened, so that the exception reads as one line.
  static std::string essence(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (auto nl = text.rfind('\n'); nl != std::string::npos) text.erase(0, nl + 1);
    if (auto colon = text.find("): "); colon != std::string::npos && text.rfind("vtk", 0) == 0)
      text.erase(0, colon + 3);
    return text;
  }

  vtkNew<vtkCallbackCommand> cb_;
  std::string message_;
};

struct Compression {
  bool compress = true;
  std::string compressor = "lz4";  // lz4, zlib or lzma
  int level = 5;
};

// Stamps a frame with its simulation time and step as field data: TimeValue (Float64; a single
// file opened on its own still knows its time, the XML readers look for it) and step (Int64).
inline void add_time_fields(vtkDataObject* data, double time, std::uint64_t step) {
  vtkNew<vtkDoubleArray> time_value;
  time_value->SetName("TimeValue");
  time_value->InsertNextValue(time);
  data->GetFieldData()->AddArray(time_value);
  vtkNew<vtkTypeInt64Array> step_value;
  step_value->SetName("step");
  step_value->InsertNextValue(static_cast<vtkTypeInt64>(step));
  data->GetFieldData()->AddArray(step_value);
}

// Writes `data` with writer `w` (a vtkXML*Writer of the matching type) to `path`: appended raw
// binary, 64-bit headers, compressed as asked, into a temporary file renamed over `path` only when
// complete. `who` names the observer in the error.
inline void write_atomic(vtkXMLWriter* w, vtkDataObject* data, const std::string& path,
                         const Compression& c, const std::string& who) {
  const std::string tmp = temp_path_for(path);
  ErrorCatcher errors(w);
  // The pipeline adds its own "algorithm returned failure" after the writer's message: caught so
  // that it does not reach stderr, and left out because it says nothing more.
  ErrorCatcher pipeline_errors(w->GetExecutive());
  w->SetInputData(data);
  w->SetFileName(tmp.c_str());
  w->SetDataModeToAppended();
  w->EncodeAppendedDataOff();  // raw binary: base64 costs a third more space and time
  w->SetHeaderTypeToUInt64();  // blocks over 4 GiB for very large files
  if (c.compress) {
    if (c.compressor == "zlib") w->SetCompressorTypeToZLib();
    else if (c.compressor == "lzma") w->SetCompressorTypeToLZMA();
    else w->SetCompressorTypeToLZ4();
    w->SetCompressionLevel(c.level);
  } else {
    w->SetCompressorTypeToNone();
  }
  const int ok = w->Write();
  if (!ok || w->GetErrorCode() != vtkErrorCode::NoError || !errors.message().empty()) {
    std::remove(tmp.c_str());
    std::string why = errors.message();
    if (w->GetErrorCode() != vtkErrorCode::NoError)
      why = std::string(vtkErrorCode::GetStringFromErrorCode(w->GetErrorCode())) +
            (why.empty() ? "" : ": " + why);
    throw Error(who + ": cannot write " + path + ": " + (why.empty() ? "VTK error" : why));
  }
  commit_file(tmp, path);
}

// The byte_order attribute of a VTK XML file written on this machine.
inline const char* byte_order() {
  const std::uint16_t one = 1;
  return *reinterpret_cast<const unsigned char*>(&one) == 1 ? "LittleEndian" : "BigEndian";
}

// `text` as the value of an XML attribute (between double quotes).
inline std::string escape_attribute(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Rewrites the collection `path` (a .pvd) listing (time, file) pairs, atomically: an interrupted run
// still opens in ParaView up to its last complete file. Files are relative to the .pvd's folder.
inline void write_pvd(const std::string& path,
                      const std::vector<std::pair<double, std::string>>& files) {
  std::string xml;
  xml.reserve(128 + 80 * files.size());
  xml += "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"";
  xml += byte_order();
  xml += "\">\n  <Collection>\n";
  for (const auto& f : files)
    xml += "    <DataSet timestep=\"" + format_double(f.first) +
           "\" group=\"\" part=\"0\" file=\"" + escape_attribute(f.second) + "\"/>\n";
  xml += "  </Collection>\n</VTKFile>\n";
  write_file_atomic(path, xml);
}

// The datasets of a collection written by write_pvd: (time, file) in order, up to the first whose
// time is past `until`; empty when the file does not exist. A resumed run keeps its collection up
// to the checkpoint's time this way.
inline std::vector<std::pair<double, std::string>> read_pvd(
    const std::string& path, double until = std::numeric_limits<double>::infinity()) {
  std::vector<std::pair<double, std::string>> out;
  std::ifstream in(path);
  std::string line;
  auto attribute = [](const std::string& l, const std::string& name, std::string& v) {
    const auto at = l.find(" " + name + "=\"");
    if (at == std::string::npos) return false;
    const auto b = at + name.size() + 3;
    const auto e = l.find('"', b);
    if (e == std::string::npos) return false;
    v = l.substr(b, e - b);
    return true;
  };
  while (std::getline(in, line)) {
    std::string t, f;
    if (line.find("<DataSet") == std::string::npos || !attribute(line, "timestep", t) ||
        !attribute(line, "file", f))
      continue;
    char* end = nullptr;
    const double time = std::strtod(t.c_str(), &end);
    if (end == t.c_str()) continue;
    if (time > until) break;
    // write_pvd escapes only what XML needs in an attribute.
    std::string file;
    for (std::size_t k = 0; k < f.size(); ++k) {
      if (f.compare(k, 5, "&amp;") == 0) file += '&', k += 4;
      else if (f.compare(k, 6, "&quot;") == 0) file += '"', k += 5;
      else if (f.compare(k, 4, "&lt;") == 0) file += '<', k += 3;
      else if (f.compare(k, 4, "&gt;") == 0) file += '>', k += 3;
      else file += f[k];
    }
    out.emplace_back(time, file);
  }
  return out;
}

}  // namespace pardyn::plugins::vtk_xml
