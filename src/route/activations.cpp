// Activations: validation and the HDF5 input layout.
//
// Layout (one file, any number of layers; documented in src/route/README.md):
//   file attribute  chunk_tokens   integer, optional (default 16)
//   /layers/<i>/q          [P, q_heads, head_dim]     float32 | float64 | uint16 (bf16 bits)
//   /layers/<i>/k          [T, kv_heads, head_dim]    same dtypes
//   /layers/<i>/positions  [P] int64, optional: absolute token index of each q row, strictly
//                          ascending, < T (default: the last P tokens, T-P .. T-1)
//   /layers/<i>/x          [P, hidden]                optional hidden states
//   /layers/<i>/w_q        [q_heads*head_dim, hidden] optional query projection, row h*d+i
// <i> is the layer index in decimal. Query head h belongs to KV group h / (q_heads/kv_heads).
// q is what attention uses (after any rotary embedding); the index queries of the
// initialisation candidates are derived from q by linearity (head h's q, or the group mean).
#include <H5Cpp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unistd.h>

#include "cisa/errors.hpp"
#include "cisa/hdf5_handle.hpp"
#include "cisa/output_file.hpp"
#include "route/route.hpp"

namespace cisa::route {

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& field, const std::string& what) {
  throw cisa::InputError(cisa::SourceLocation{file, 0, field}, what);
}

}  // namespace

void LayerActivations::validate(const std::string& source) const {
  const std::string base = "layers/" + std::to_string(layer) + "/";
  if (q_heads <= 0 || kv_heads <= 0 || head_dim <= 0)
    fail(source, base + "q", "head counts and head_dim must be positive");
  if (q_heads % kv_heads != 0)
    fail(source, base + "q",
         "q_heads (" + std::to_string(q_heads) + ") must be a multiple of kv_heads (" +
             std::to_string(kv_heads) + ")");
  if (tokens <= 0) fail(source, base + "k", "no keys");
  const auto P = num_positions();
  if (P <= 0) fail(source, base + "q", "no analysed positions");
  if (static_cast<std::int64_t>(q.size()) != P * q_heads * head_dim)
    fail(source, base + "q", "size does not match [positions, q_heads, head_dim]");
  if (static_cast<std::int64_t>(k.size()) != tokens * kv_heads * head_dim)
    fail(source, base + "k", "size does not match [tokens, kv_heads, head_dim]");
  for (std::int64_t p = 0; p < P; ++p) {
    if (positions[p] < 0 || positions[p] >= tokens)
      fail(source, base + "positions",
           "position " + std::to_string(positions[p]) + " outside [0, " +
               std::to_string(tokens) + ")");
    if (p > 0 && positions[p] <= positions[p - 1])
      fail(source, base + "positions", "positions must be strictly ascending");
  }
  if (hidden > 0) {
    if (static_cast<std::int64_t>(x.size()) != P * hidden)
      fail(source, base + "x", "size does not match [positions, hidden]");
    if (static_cast<std::int64_t>(w_q.size()) !=
        static_cast<std::int64_t>(q_heads) * head_dim * hidden)
      fail(source, base + "w_q", "size does not match [q_heads*head_dim, hidden]");
  }
  for (float v : q)
    if (!std::isfinite(v)) fail(source, base + "q", "non-finite value");
  for (float v : k)
    if (!std::isfinite(v)) fail(source, base + "k", "non-finite value");
}

namespace {

struct Dataset {
  std::vector<hsize_t> dims;
  std::vector<float> data;
};

float bf16_to_float(std::uint16_t b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

bool has_link(const H5::Group& g, const std::string& name) {
  return H5Lexists(g.getId(), name.c_str(), H5P_DEFAULT) > 0;
}

Dataset read_float_dataset(const H5::Group& g, const std::string& name, const std::string& file,
                           const std::string& field) {
  Dataset out;
  H5::DataSet ds = g.openDataSet(name);
  H5::DataSpace space = ds.getSpace();
  const int rank = space.getSimpleExtentNdims();
  out.dims.resize(static_cast<std::size_t>(rank));
  space.getSimpleExtentDims(out.dims.data());
  if (rank < 1 || rank > 3) fail(file, field, "rank " + std::to_string(rank) + " (expected 2-D or 3-D)");
  hsize_t n = 1;
  for (auto d : out.dims) {
    if (d > (hsize_t{1} << 34) || (d && n > (hsize_t{1} << 34) / d)) fail(file, field, "implausibly large dimensions");
    n *= d;
  }
  const H5T_class_t cls = ds.getTypeClass();
  // Contiguous data must be present in full (a corrupt header can claim any size).
  {
    const hid_t dcpl = H5Dget_create_plist(ds.getId());
    const bool contiguous = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CONTIGUOUS;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (contiguous && n > 0 && ds.getStorageSize() < n * ds.getDataType().getSize())
      fail(file, field, "holds fewer bytes than its dimensions need (truncated or corrupt)");
  }
  out.data.resize(n);
  if (cls == H5T_FLOAT) {
    ds.read(out.data.data(), H5::PredType::NATIVE_FLOAT);
  } else if (cls == H5T_INTEGER && ds.getIntType().getSize() == 2 &&
             ds.getIntType().getSign() == H5T_SGN_NONE) {
    std::vector<std::uint16_t> raw(n);
    ds.read(raw.data(), H5::PredType::NATIVE_UINT16);
    for (hsize_t i = 0; i < n; ++i) out.data[i] = bf16_to_float(raw[i]);
  } else {
    fail(file, field, "expected float32/float64, or uint16 holding bfloat16 bits");
  }
  return out;
}

}  // namespace

ActivationsInfo read_activations_info(const std::filesystem::path& path) {
  const std::string file = path.string();
  if (!std::filesystem::exists(path)) fail(file, "", "file not found");
  ActivationsInfo info;
  try {
    H5::Exception::dontPrint();
    H5::H5File f(file, H5F_ACC_RDONLY);
    if (f.attrExists("chunk_tokens")) {
      H5::Attribute at = f.openAttribute("chunk_tokens");
      if (at.getTypeClass() != H5T_INTEGER || at.getSpace().getSimpleExtentNpoints() != 1)
        fail(file, "chunk_tokens", "attribute must be one integer");
      long long c = 0;
      at.read(H5::PredType::NATIVE_LLONG, &c);
      if (c <= 0) fail(file, "chunk_tokens", "must be positive");
      info.chunk_tokens = c;
    }
    if (!has_link(f, "layers")) fail(file, "layers", "missing group /layers");
    H5::Group layers = f.openGroup("layers");
    const hsize_t n = layers.getNumObjs();
    for (hsize_t i = 0; i < n; ++i) {
      const std::string name = layers.getObjnameByIdx(i);
      char* end = nullptr;
      const long v = std::strtol(name.c_str(), &end, 10);
      if (name.empty() || *end != '\0' || v < 0)
        fail(file, "layers/" + name, "layer groups must be named by their index (0, 1, ...)");
      info.layers.push_back(static_cast<int>(v));
    }
    std::sort(info.layers.begin(), info.layers.end());
    if (info.layers.empty()) fail(file, "layers", "no layers");
  } catch (const H5::Exception& e) {
    fail(file, "", "cannot read HDF5 file: " + e.getDetailMsg());
  }
  return info;
}

LayerActivations read_layer(const std::filesystem::path& path, int layer) {
  const std::string file = path.string();
  const std::string base = "layers/" + std::to_string(layer);
  LayerActivations a;
  a.layer = layer;
  try {
    H5::Exception::dontPrint();
    H5::H5File f(file, H5F_ACC_RDONLY);
    if (!has_link(f, "layers") || !has_link(f.openGroup("layers"), std::to_string(layer)))
      fail(file, base, "no such layer group");
    H5::Group g = f.openGroup(base);
    for (const char* req : {"q", "k"})
      if (!has_link(g, req)) fail(file, base + "/" + req, "missing dataset");
    Dataset q = read_float_dataset(g, "q", file, base + "/q");
    Dataset k = read_float_dataset(g, "k", file, base + "/k");
    if (q.dims.size() != 3) fail(file, base + "/q", "must be 3-D [positions, q_heads, head_dim]");
    if (k.dims.size() != 3) fail(file, base + "/k", "must be 3-D [tokens, kv_heads, head_dim]");
    if (q.dims[2] != k.dims[2]) fail(file, base + "/k", "head_dim differs from q's");
    for (hsize_t d : {q.dims[1], q.dims[2], k.dims[1]})
      if (d > (1u << 20)) fail(file, base + "/q", "implausible head count or head_dim " + std::to_string(d));
    const auto P = static_cast<std::int64_t>(q.dims[0]);
    a.q_heads = static_cast<int>(q.dims[1]);
    a.head_dim = static_cast<int>(q.dims[2]);
    a.tokens = static_cast<std::int64_t>(k.dims[0]);
    a.kv_heads = static_cast<int>(k.dims[1]);
    a.q = std::move(q.data);
    a.k = std::move(k.data);
    if (has_link(g, "positions")) {
      H5::DataSet ds = g.openDataSet("positions");
      H5::DataSpace sp = ds.getSpace();
      hsize_t n = 0;
      if (sp.getSimpleExtentNdims() != 1) fail(file, base + "/positions", "must be 1-D");
      sp.getSimpleExtentDims(&n);
      if (static_cast<std::int64_t>(n) != P)
        fail(file, base + "/positions", "length differs from q's first dimension");
      if (ds.getTypeClass() != H5T_INTEGER) fail(file, base + "/positions", "must be an integer dataset");
      std::vector<long long> pos(n);
      ds.read(pos.data(), H5::PredType::NATIVE_LLONG);
      a.positions.assign(pos.begin(), pos.end());
    } else {
      if (P > a.tokens) fail(file, base + "/q", "more query rows than tokens; give positions");
      for (std::int64_t p = 0; p < P; ++p) a.positions.push_back(a.tokens - P + p);
    }
    const bool hx = has_link(g, "x"), hw = has_link(g, "w_q");
    if (hx != hw) fail(file, base + (hx ? "/w_q" : "/x"), "x and w_q must be given together");
    if (hx) {
      Dataset x = read_float_dataset(g, "x", file, base + "/x");
      Dataset w = read_float_dataset(g, "w_q", file, base + "/w_q");
      if (x.dims.size() != 2 || static_cast<std::int64_t>(x.dims[0]) != P)
        fail(file, base + "/x", "must be [positions, hidden]");
      if (w.dims.size() != 2 || w.dims[1] != x.dims[1])
        fail(file, base + "/w_q", "must be [q_heads*head_dim, hidden]");
      a.hidden = static_cast<int>(x.dims[1]);
      a.x = std::move(x.data);
      a.w_q = std::move(w.data);
    }
  } catch (const H5::Exception& e) {
    fail(file, base, "cannot read HDF5 data: " + e.getDetailMsg());
  }
  a.validate(file);
  return a;
}

namespace {
void write_ds(H5::Group& g, const std::string& name, const std::vector<hsize_t>& dims,
              const float* data) {
  H5::DataSpace sp(static_cast<int>(dims.size()), dims.data());
  H5::DataSet ds = g.createDataSet(name, H5::PredType::IEEE_F32LE, sp);
  ds.write(data, H5::PredType::NATIVE_FLOAT);
}
}  // namespace

void write_activations(const std::filesystem::path& path,
                       const std::vector<const LayerActivations*>& layers,
                       std::int64_t chunk_tokens) {
  cisa::OutputFile out(path.string(), "--write-activations");
  try {
    H5::Exception::dontPrint();
    H5::H5File f(out.temp().string(), H5F_ACC_EXCL);
    {
      {
        H5::DataSpace scalar(H5S_SCALAR);
        H5::Attribute at = f.createAttribute("chunk_tokens", H5::PredType::STD_I64LE, scalar);
        const long long c = chunk_tokens;
        at.write(H5::PredType::NATIVE_LLONG, &c);
      }
      H5::Group root = f.createGroup("layers");
      for (const LayerActivations* a : layers) {
        H5::Group g = root.createGroup(std::to_string(a->layer));
        const auto P = static_cast<hsize_t>(a->num_positions());
        write_ds(g, "q", {P, hsize_t(a->q_heads), hsize_t(a->head_dim)}, a->q.data());
        write_ds(g, "k", {hsize_t(a->tokens), hsize_t(a->kv_heads), hsize_t(a->head_dim)},
                 a->k.data());
        hsize_t n = P;
        H5::DataSpace sp(1, &n);
        H5::DataSet ds = g.createDataSet("positions", H5::PredType::STD_I64LE, sp);
        std::vector<long long> pos(a->positions.begin(), a->positions.end());
        ds.write(pos.data(), H5::PredType::NATIVE_LLONG);
        if (a->has_projection()) {
          write_ds(g, "x", {P, hsize_t(a->hidden)}, a->x.data());
          write_ds(g, "w_q", {hsize_t(a->q_heads) * hsize_t(a->head_dim), hsize_t(a->hidden)},
                   a->w_q.data());
        }
      }
    }
    f.close();  // throws when the final flush fails (every object above is closed by now)
  } catch (const H5::Exception& e) {
    cisa::h5::write_failed(path.string(), e.getDetailMsg());
  }
  out.commit();
}

}  // namespace cisa::route
