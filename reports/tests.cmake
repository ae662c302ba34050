sf_test(reports_test SOURCES results_db_test.cc LIBS sf_reports)
