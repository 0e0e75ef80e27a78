// The JSONL/CSV import options (csv_util.h TextImportOptions, RecordCollector) on traces parsed from
// memory: list cells, --token-from order, --layer-base, --where, --skip-warmup, --drop-duplicates, BOM,
// --delimiter, a last line without its newline, and the option parsers' usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "base/error.h"
#include "base/warnings.h"
#include "tests/error_of.h"
#include "traces/csv_util.h"
#include "traces/trace_io.h"

namespace moesim::traces {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test::error_of;

std::vector<uint16_t> experts_of(const Trace& t, size_t r) {
  auto e = t.experts(r);
  return {e.begin(), e.end()};
}

// Warnings raised by `f`, muted.
std::vector<std::string> warnings_of(const std::function<void()>& f) {
  clear_warnings();
  set_warnings_printed(false);
  f();
  set_warnings_printed(true);
  auto w = warnings();
  clear_warnings();
  return w;
}

std::vector<std::string> list(std::string_view cell) {
  std::vector<std::string_view> items;
  std::string err;
  if (!split_list(cell, items, err)) return {"ERROR: " + err};
  return {items.begin(), items.end()};
}

TEST(SplitList, AcceptedForms) {
  EXPECT_THAT(list("1;5;9"), ElementsAre("1", "5", "9"));
  EXPECT_THAT(list("1,5,9"), ElementsAre("1", "5", "9"));
  EXPECT_THAT(list("1 5  9"), ElementsAre("1", "5", "9"));
  EXPECT_THAT(list("[8, 26, 56]"), ElementsAre("8", "26", "56"));
  EXPECT_THAT(list(" [ 8 ; 26 ] "), ElementsAre("8", "26"));
  EXPECT_THAT(list("0.5, -1e-3"), ElementsAre("0.5", "-1e-3"));
  EXPECT_TRUE(list("").empty());
  EXPECT_TRUE(list("[]").empty());
}

TEST(SplitList, MalformedListsAreErrors) {
  EXPECT_THAT(list("1;;2")[0], HasSubstr("ERROR: empty item"));
  EXPECT_THAT(list("1,")[0], HasSubstr("ERROR: empty item at the end"));
  EXPECT_THAT(list(",1")[0], HasSubstr("ERROR: empty item"));
  EXPECT_THAT(list("[1, 2")[0], HasSubstr("'[' but no ']'"));
  EXPECT_THAT(list("[1, 2]x")[0], HasSubstr("text after ']'"));
}

TEST(ImportOptions, QuotedBracketListsInCsv) {
  const Trace t = import_csv(
      "token,layer,experts,weights\n0,0,\"[8, 26, 56]\",\"[0.5, 0.3, 0.2]\"\n1,0,1 2 3,0.1 0.2 0.7\n",
      "l.csv");
  ASSERT_EQ(t.records(), 2u);
  EXPECT_THAT(experts_of(t, 0), ElementsAre(8, 26, 56));
  EXPECT_THAT(experts_of(t, 1), ElementsAre(1, 2, 3));
  EXPECT_FLOAT_EQ(t.weights(0)[2], 0.2f);
  // An unquoted list with the separator inside splits into extra columns: the error says to quote it.
  EXPECT_THAT(
      error_of([] { (void)import_csv("token,layer,experts\n0,0,[8, 26]\n", "l.csv"); }),
      HasSubstr("l.csv:2: 4 columns, the header has 3 (a list with the separator inside must be quoted"));
  EXPECT_THAT(error_of([] { (void)import_csv("token,layer,experts\n0,0,\"[8,,26]\"\n", "l.csv"); }),
              HasSubstr("l.csv:2: field 'experts': empty item"));
}

TEST(ImportOptions, StringListsInJsonl) {
  const Trace t = import_jsonl(R"({"token":0,"layer":0,"experts":"[3, 1]","weights":"0.75;0.25"})"
                               "\n"
                               R"({"token":1,"layer":0,"experts":[2,0],"weights":[0.5,0.5]})"
                               "\n",
                               "s.jsonl");
  EXPECT_THAT(experts_of(t, 0), ElementsAre(3, 1));
  EXPECT_FLOAT_EQ(t.weights(0)[0], 0.75f);
  EXPECT_THAT(
      error_of([] { (void)import_jsonl(R"({"token":0,"layer":0,"experts":[1],"weights":"x"})", "s.jsonl"); }),
      HasSubstr("s.jsonl:1: field 'weights': not a float32 number: 'x'"));
}

TEST(ImportOptions, TokenFromOrder) {
  TextImportOptions o;
  o.token_from_order = true;
  // Two layers interleaved, two sequences: within each (seq, layer) the n-th record is token n.
  const Trace t = import_csv("seq,layer,experts\n0,0,1\n0,1,2\n0,0,3\n0,1,4\n1,0,5\n1,1,6\n", "o.csv", o);
  ASSERT_EQ(t.records(), 6u);
  EXPECT_EQ(t.tokens(Phase::kDecode), 3u);
  // canonical order: seq 0 step 0 (layers 0, 1), seq 0 step 1, seq 1 step 0
  EXPECT_EQ(t.step(2), 1u);
  EXPECT_EQ(t.layer(2), 0u);
  EXPECT_THAT(experts_of(t, 2), ElementsAre(3));
  EXPECT_EQ(t.seq(4), 1u);
  EXPECT_EQ(t.step(4), 0u);
  EXPECT_EQ(t.info().provenance["token_from"], "order");
  const Trace j =
      import_jsonl("{\"layer\":0,\"experts\":[1]}\n{\"layer\":0,\"experts\":[2]}\n", "o.jsonl", o);
  EXPECT_EQ(j.step(1), 1u);
  EXPECT_THAT(experts_of(j, 1), ElementsAre(2));
  // A token column or key with the flag is an error; without the flag the missing token suggests it.
  EXPECT_THAT(error_of([&] { (void)import_csv("token,layer,experts\n0,0,1\n", "o.csv", o); }),
              HasSubstr("o.csv:1: field 'token': --token-from order, but the header has a token column"));
  EXPECT_THAT(
      error_of([&] { (void)import_jsonl("{\"token\":0,\"layer\":0,\"experts\":[1]}\n", "o.jsonl", o); }),
      HasSubstr("o.jsonl:1: field 'token': --token-from order"));
  EXPECT_THAT(error_of([] { (void)import_csv("layer,experts\n0,1\n", "o.csv"); }),
              HasSubstr("--token-from order"));
  EXPECT_THAT(error_of([] { (void)import_jsonl("{\"layer\":0,\"experts\":[1]}\n", "o.jsonl"); }),
              HasSubstr("o.jsonl:1: field 'token': missing (no key named 'token' in the record, which has: "
                        "experts, layer); map it with --fields token=NAME; to number tokens by file order: "
                        "--token-from order"));
}

TEST(ImportOptions, LayerBase) {
  TextImportOptions o;
  o.layer_base = 1;
  const Trace t = import_csv("token,layer,experts\n0,1,1\n0,2,2\n", "b.csv", o);
  EXPECT_EQ(t.info().layers, 2u);
  EXPECT_EQ(t.layer(0), 0u);
  EXPECT_EQ(t.info().provenance["layer_base"], 1);
  EXPECT_THAT(error_of([&] { (void)import_csv("token,layer,experts\n0,1,1\n0,0,2\n", "b.csv", o); }),
              HasSubstr("b.csv:3: field 'layer': layer id 0 below --layer-base 1"));
  // With the model's shape, the id one past the last layer suggests --layer-base 1 ...
  EXPECT_THAT(
      error_of([] {
        (void)import_csv("token,layer,experts\n0,26,1\n", "b.csv", {}, ImportShape{26, 64});
      }),
      HasSubstr(
          "b.csv:2: field 'layer': layer 26 outside the model's 26 MoE layers: the layer counts disagree "
          "(ids start at 1? try --layer-base 1)"));
  // ... but not when layer 0 is in use: then the trace is another model's (a 32-layer Mixtral trace with a
  // 26-layer --model), and the message says so.
  const std::string other = error_of([] {
    (void)import_csv("token,layer,experts\n0,0,1\n0,26,1\n", "b.csv", {}, ImportShape{26, 64});
  });
  EXPECT_THAT(other,
              HasSubstr("b.csv:3: field 'layer': layer 26 outside the model's 26 MoE layers: the layer "
                        "counts disagree (a trace of another model? check --model)"));
  EXPECT_THAT(other, ::testing::Not(HasSubstr("--layer-base")));
  // ... further out it does not; with the base given, the message names both ids.
  EXPECT_THAT(error_of([] {
                (void)import_csv("token,layer,experts\n0,30,1\n", "b.csv", {}, ImportShape{26, 64});
              }),
              testing::Not(HasSubstr("--layer-base")));
  EXPECT_THAT(error_of([&] {
                (void)import_csv("token,layer,experts\n0,27,1\n", "b.csv", o, ImportShape{26, 64});
              }),
              HasSubstr("layer id 27 (layer 26 after --layer-base 1) outside the model's 26 MoE layers"));
  EXPECT_EQ(import_csv("token,layer,experts\n0,26,1\n", "b.csv", o, ImportShape{26, 64}).layer(0), 25u);
}

TEST(ImportOptions, OneBasedFileWithoutModelWarns) {
  auto w = warnings_of([] { (void)import_csv("token,layer,experts\n0,1,1\n0,2,2\n", "w.csv"); });
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], HasSubstr("w.csv: the smallest layer id is 1 and there is no layer 0"));
  EXPECT_THAT(w[0], HasSubstr("--layer-base 1"));
  EXPECT_TRUE(warnings_of([] { (void)import_csv("token,layer,experts\n0,0,1\n0,2,2\n", "w.csv"); }).empty());
  EXPECT_TRUE(warnings_of([] { (void)import_csv("token,layer,experts\n0,2,1\n", "w.csv"); }).empty());
}

TEST(ImportOptions, WhereFiltersJsonl) {
  TextImportOptions o;
  o.where = {{"type", "route"}, {"rank", "0"}};
  const std::string text = R"({"type":"meta","model":"x"})"
                           "\n"
                           R"({"type":"route","rank":0,"token":0,"layer":0,"experts":[1]})"
                           "\n"
                           R"({"type":"route","rank":1,"token":0,"layer":0,"experts":[2]})"
                           "\n"
                           R"({"type":"route","token":1,"layer":0,"experts":[3]})"
                           "\n"
                           R"({"type":"route","rank":"0","token":1,"layer":0,"experts":[4]})"
                           "\n";
  Trace t;
  auto w = warnings_of([&] { t = import_jsonl(text, "f.jsonl", o); });
  // Kept: rank 0 (the number, compared as its JSON text) and rank "0" (the string); not the meta line, rank
  // 1, nor the record without "rank".
  ASSERT_EQ(t.records(), 2u);
  EXPECT_THAT(experts_of(t, 0), ElementsAre(1));
  EXPECT_THAT(experts_of(t, 1), ElementsAre(4));
  EXPECT_EQ(t.info().provenance["where_skipped"], 3);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], HasSubstr("f.jsonl: --where skipped 3 of 5 records"));
  // Non-object lines are still errors; all records filtered is an error that says so.
  EXPECT_THAT(error_of([&] { (void)import_jsonl("[1]\n", "f.jsonl", o); }),
              HasSubstr("f.jsonl:1: a record must be"));
  EXPECT_THAT(error_of([&] { (void)import_jsonl(R"({"type":"meta"})", "f.jsonl", o); }),
              HasSubstr("no routing records left: --where skipped all 1"));
}

TEST(ImportOptions, WhereFiltersCsv) {
  TextImportOptions o;
  o.where = {{"kind", "route"}};
  const Trace t = import_csv("kind,token,layer,experts\nroute,0,0,1\nwarm,1,0,2\nroute,1,0,3\n", "f.csv", o);
  ASSERT_EQ(t.records(), 2u);
  EXPECT_THAT(experts_of(t, 1), ElementsAre(3));
  o.where = {{"nope", "x"}};
  EXPECT_THAT(error_of([&] { (void)import_csv("token,layer,experts\n0,0,1\n", "f.csv", o); }),
              HasSubstr("f.csv:1: field 'where': --where nope=...: no column named 'nope'"));
}

TEST(ImportOptions, SkipWarmupDropsIdenticalLeadingTokens) {
  TextImportOptions o;
  o.token_from_order = true;
  o.skip_warmup = true;
  // Two layers; three dummy tokens routed to {0,1} on every layer, then real traffic. The first real token
  // matches the dummy routing on layer 0, so the run extends into it; trimming to whole tokens keeps it.
  const std::string text =
      "layer,experts\n0,0;1\n1,1;0\n0,0;1\n1,0;1\n0,1;0\n1,0;1\n"  // warm-up, lines 2-7
      "0,0;1\n1,5;6\n0,2;3\n1,7;4\n";                              // real tokens 0 and 1
  Trace t;
  auto w = warnings_of([&] { t = import_csv(text, "w.csv", o); });
  ASSERT_EQ(t.records(), 4u);
  EXPECT_EQ(t.step(0), 0u);
  EXPECT_THAT(experts_of(t, 0), ElementsAre(0, 1));
  EXPECT_THAT(experts_of(t, 1), ElementsAre(5, 6));
  EXPECT_THAT(experts_of(t, 3), ElementsAre(7, 4));
  EXPECT_EQ(t.info().provenance["warmup_dropped"], 6);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], HasSubstr("w.csv: --skip-warmup dropped 6 warm-up records (lines 2-7)"));
}

TEST(ImportOptions, SkipWarmupLeavesRealTrafficAlone) {
  TextImportOptions o;
  o.skip_warmup = true;
  // No repeated leading token: nothing is dropped, and the warning says so.
  const std::string text = "token,layer,experts\n0,0,1;2\n0,1,3;4\n1,0,1;5\n1,1,3;4\n";
  Trace t;
  auto w = warnings_of([&] { t = import_csv(text, "r.csv", o); });
  EXPECT_EQ(t.records(), 4u);
  EXPECT_EQ(t.info().provenance["warmup_dropped"], 0);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], HasSubstr("found no warm-up preamble"));
  // Identical rows repeated with token ids: dropped by (seq, phase, token).
  const Trace u = import_csv("token,layer,experts\n0,0,9;8\n1,0,9;8\n2,0,1;2\n3,0,9;8\n", "r.csv", o);
  ASSERT_EQ(u.records(), 2u);
  EXPECT_EQ(u.step(0), 2u);
  // Everything identical: nothing real is left, which is an error.
  set_warnings_printed(false);
  EXPECT_THAT(error_of([&] { (void)import_csv("token,layer,experts\n0,0,1\n1,0,1\n", "r.csv", o); }),
              HasSubstr("no routing records left after --skip-warmup dropped all 2"));
  set_warnings_printed(true);
  clear_warnings();
}

TEST(ImportOptions, DropDuplicates) {
  const std::string text = "token,layer,experts\n0,0,1\n0,0,2\n1,0,3\n0,0,4\n";
  EXPECT_THAT(
      error_of([&] { (void)import_csv(text, "d.csv"); }),
      HasSubstr("d.csv:3: duplicate record for sequence 0, decode step 0, layer 0 (first seen at line 2; "
                "--drop-duplicates keeps the first)"));
  TextImportOptions o;
  o.drop_duplicates = true;
  Trace t;
  auto w = warnings_of([&] { t = import_csv(text, "d.csv", o); });
  ASSERT_EQ(t.records(), 2u);
  EXPECT_THAT(experts_of(t, 0), ElementsAre(1));  // the first one is kept
  EXPECT_EQ(t.info().provenance["duplicates_dropped"], 2);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], HasSubstr("d.csv: --drop-duplicates dropped 2 duplicate records"));
}

TEST(ImportOptions, ByteOrderMark) {
  const std::string bom = "\xEF\xBB\xBF";
  EXPECT_EQ(import_csv(bom + "token,layer,experts\n0,0,1\n", "b.csv").records(), 1u);
  EXPECT_EQ(import_jsonl(bom + "{\"token\":0,\"layer\":0,\"experts\":[1]}\n", "b.jsonl").records(), 1u);
  EXPECT_EQ(import_bigmoe(
                bom + "# route_trace v1\n# model=m arch=a n_layer=1 n_expert=2 n_expert_used=1\n"
                      "turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n0,1,0,0,0,1,1,0,0\n",
                "b.route.csv")
                .records(),
            1u);
  EXPECT_EQ(detect_format(bom + "{\"a\":1}"), "jsonl");
  EXPECT_EQ(detect_format(bom + "# route_trace v1\n"), "bigmoe");
}

TEST(ImportOptions, Delimiter) {
  // A header with tabs and no commas is tab-separated; lists inside may use commas then.
  const Trace t = import_csv("token\tlayer\texperts\n0\t0\t[1, 2]\n", "t.tsv");
  EXPECT_THAT(experts_of(t, 0), ElementsAre(1, 2));
  TextImportOptions o;
  o.delimiter = ';';
  EXPECT_THAT(experts_of(import_csv("token;layer;experts\n0;0;1 2\n", "s.csv", o), 0), ElementsAre(1, 2));
  // Tabs in a one-column header without the flag: the error suggests it.
  o.delimiter = ',';
  EXPECT_THAT(error_of([&] { (void)import_csv("token\tlayer\texperts\n0\t0\t1\n", "t.tsv", o); }),
              HasSubstr("--delimiter tab"));
  EXPECT_EQ(parse_delimiter(""), 0);
  EXPECT_EQ(parse_delimiter("tab"), '\t');
  EXPECT_EQ(parse_delimiter("\\t"), '\t');
  EXPECT_EQ(parse_delimiter("|"), '|');
  EXPECT_THROW((void)parse_delimiter("ab"), UsageError);
  EXPECT_THROW((void)parse_delimiter("\""), UsageError);
}

TEST(ImportOptions, LastLineWithoutNewline) {
  // Cut inside its last number: it parses (63 became 6), so it is accepted with a warning naming the line.
  Trace t;
  auto w = warnings_of([&] { t = import_csv("token,layer,experts\n0,0,1;63\n1,0,2;6", "cut.csv"); });
  EXPECT_EQ(t.records(), 2u);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], HasSubstr("cut.csv:3: the last line has no newline; the file may have been cut"));
  // Cut so that it does not parse: an error, noting the missing newline.
  EXPECT_THAT(
      error_of([] { (void)import_csv("token,layer,experts\n0,0,1;63\n1,0,2;", "cut.csv"); }),
      HasSubstr("cut.csv:3: field 'experts': empty item at the end of list '2;' (the last line has no "
                "newline: the file may have been cut)"));
  EXPECT_THAT(error_of([] {
                (void)import_jsonl("{\"token\":0,\"layer\":0,\"experts\":[1]}\n{\"token\":1,\"la", "c.jsonl");
              }),
              HasSubstr("the last line has no newline"));
  auto w2 = warnings_of([] {
    (void)import_bigmoe(
        "# route_trace v1\n# model=m arch=a n_layer=1 n_expert=64 n_expert_used=1\n"
        "turn,phase,step,layer,slot,expert,weight,residency,expert_bytes\n0,1,0,0,0,6,1,0,0",
        "cut.route.csv");
  });
  ASSERT_EQ(w2.size(), 1u);
  EXPECT_THAT(w2[0], HasSubstr("cut.route.csv:4: the last line has no newline"));
  // JSONL: a complete last record without its newline warns as CSV does (the file may end between records
  // because the writer was stopped), and so does one that --where skips.
  auto w3 = warnings_of([] {
    (void)import_jsonl("{\"token\":0,\"layer\":0,\"experts\":[1]}\n{\"token\":1,\"layer\":0,\"experts\":[2]}",
                       "cut.jsonl");
  });
  ASSERT_EQ(w3.size(), 1u);
  EXPECT_THAT(w3[0], HasSubstr("cut.jsonl:2: the last line has no newline; the file may have been cut"));
  TextImportOptions where;
  where.where = {{"type", "route"}};
  auto w4 = warnings_of([&] {
    (void)import_jsonl("{\"type\":\"route\",\"token\":0,\"layer\":0,\"experts\":[1]}\n{\"type\":\"meta\"}",
                       "cut.jsonl", where);
  });
  EXPECT_THAT(w4, ::testing::Contains(HasSubstr("cut.jsonl:2: the last line has no newline")));
  EXPECT_TRUE(warnings_of([] {
                (void)import_jsonl("{\"token\":0,\"layer\":0,\"experts\":[1]}\n", "ok.jsonl");
              }).empty());
  // With the newline, no warning.
  EXPECT_TRUE(warnings_of([] { (void)import_csv("token,layer,experts\n0,0,1\n", "ok.csv"); }).empty());
}

TEST(ImportOptions, OptionParsers) {
  EXPECT_EQ(parse_where("type=route"), (std::pair<std::string, std::string>{"type", "route"}));
  EXPECT_EQ(parse_where("a=b=c"), (std::pair<std::string, std::string>{"a", "b=c"}));
  EXPECT_EQ(parse_where("a="), (std::pair<std::string, std::string>{"a", ""}));
  EXPECT_THROW((void)parse_where("type"), UsageError);
  EXPECT_THROW((void)parse_where("=x"), UsageError);
  LoadOptions lo;
  lo.token_from = "row";
  EXPECT_THROW((void)text_import_options(lo), UsageError);
  lo = {};
  lo.token_from = "order";
  lo.where = {"type=route"};
  lo.layer_base = 1;
  lo.delimiter = "tab";
  const TextImportOptions t = text_import_options(lo);
  EXPECT_TRUE(t.token_from_order);
  EXPECT_EQ(t.layer_base, 1u);
  EXPECT_EQ(t.delimiter, '\t');
  ASSERT_EQ(t.where.size(), 1u);
  EXPECT_EQ(t.where[0].second, "route");
}

TEST(ImportOptions, BinaryDataOffset) {
  EXPECT_EQ(binary_data_offset("token,layer\n", true), std::string_view::npos);
  EXPECT_EQ(binary_data_offset(std::string_view("ab\0c", 4), true), 2u);
  EXPECT_EQ(binary_data_offset("caf\xC3\xA9 ok", true), std::string_view::npos);
  EXPECT_EQ(binary_data_offset("ab\xFF", true), 2u);
  // A multi-byte sequence cut by the end of the head is fine when the file goes on, not when it ends.
  EXPECT_EQ(binary_data_offset("ab\xC3", false), std::string_view::npos);
  EXPECT_EQ(binary_data_offset("ab\xC3", true), 2u);
}

}  // namespace
}  // namespace moesim::traces
