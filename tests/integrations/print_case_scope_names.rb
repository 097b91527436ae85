# frozen_string_literal: true

# Prints what integrations/ruby/ste_forking_runner.rb makes of test case
# names.
#
#   ruby print_case_scope_names.rb NAMES_FILE
#
# NAMES_FILE holds one name per line, in hex (an empty line: the empty
# name). Prints, per name, the hex of ScopeApi.case_name(name), the name
# given as a runner has it: a UTF-8 string (valid or not). Read by
# case_scope_name_test.cc.

require_relative "../../integrations/ruby/ste_forking_runner"

File.read(ARGV.fetch(0)).split("\n", -1)[0...-1].each do |hex|
  name = [hex.strip].pack("H*").force_encoding(Encoding::UTF_8)
  puts SteForkingRunner::ScopeApi.case_name(name).unpack1("H*")
end
