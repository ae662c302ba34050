sf_test(reports_test SOURCES results_db_test.cc llama_bench_import_test.cc LIBS sf_reports)
sf_test(report_test SOURCES report_test.cc LIBS sf_reports absl::strings)
