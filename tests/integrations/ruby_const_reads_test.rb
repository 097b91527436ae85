# frozen_string_literal: true

# The definition tracker's constant records (integrations/ruby/
# ste_const_reads.rb, loaded by ste_defs.rb; ctest RubyConstReads):
#
#     ruby tests/integrations/ruby_const_reads_test.rb
#
# Each case is a fresh ruby process run as ste runs a test at definition
# level (STE_DEFINITIONS=<root>, -r ste_defs.rb) with a recorder loaded
# after it that appends each path the tracker stats to a file. Checks: a
# simple constant is recorded (`<file>/\x01ste-name:<Full::Name>`, the
# fingerprinter's name) when a method that ran names it, when module-level
# code of any loaded file names it, when a loaded file outside the
# repository names it, when its name reaches Module#const_get or comes
# out of Module#constants; a constant no code that ran names is not; a
# repository file that no longer parses, or a method made by eval that
# ran, makes every loaded file's namespace a dependency (a define_method
# block is module-level code: no doubt). And (format 10 of the
# fingerprints) a method a loaded repository file defines is recorded
# (`<file>/\x01ste-name:<method name>`, without a final ?, ! or =) when
# code that ran holds its name, the name reaches Kernel#method or
# Module#instance_method at run time, or a call of it failed on arity.

require "minitest/autorun"
require "rbconfig"
require_relative "ruby_tracked_run"
require "tmpdir"
require "fileutils"

class RubyConstReadsTest < Minitest::Test
  include RubyTrackedRun

  def setup
    @root = Dir.mktmpdir("ste-consts-")
    @outside = Dir.mktmpdir("ste-consts-outside-")
    Dir.mkdir(File.join(@root, "lib"))
    File.write(File.join(@root, "lib", "mime.rb"), <<~RUBY)
      module Rack
        module Mime
          MIME_TYPES = { ".a" => "x/y" }.freeze
          OTHER = 1
          UNREAD = :u

          def self.mime_type(ext)
            MIME_TYPES[ext]
          end

          def self.other
            2
          end
        end
      end
    RUBY
    File.write(File.join(@root, "lib", "user.rb"), <<~RUBY)
      require "mime"
      class User
        DEFAULT = Rack::Mime::OTHER + 1
        def dynamic(name) = Rack::Mime.const_get(name)
      end
    RUBY
    File.write(File.join(@root, "lib", "dyn.rb"), <<~RUBY)
      class Dyn
        K = 1
        J = 2
        define_method(:block) { K }
        class_eval <<~R, __FILE__, __LINE__ + 1
          def evald = 3
        R
      end
    RUBY
    File.write(File.join(@outside, "gem.rb"), "module Gem2\n  def self.read = Rack::Mime::UNREAD\nend\n")
  end

  def teardown
    FileUtils.rm_rf(@root)
    FileUtils.rm_rf(@outside)
  end

  # Runs `code` (a script in the root) tracked; returns [output, the
  # constant records as "lib/<file>: <name or *>"] (`methods: true`: the
  # method records instead, "lib/<file>: <name>").
  def run_tracked(code, methods: false)
    out, paths = run_script(@root, @outside, code, load_path: [@outside])
    assert(paths.any? { |p| p.start_with?("/\x01ste-defs-end:") }, "no end marker\n#{out}\n#{paths.inspect}")
    consts = paths.filter_map do |p|
      m = p.match(%r{\A#{Regexp.escape(@root)}/(.*)/\x01ste-(?:name:(.*)|namespace)\z})
      next unless m
      # (a constant's name starts with a capital; these methods' do not)
      next if m[2] && m[2].match?(/\A[a-z_]/) != methods

      "#{m[1]}: #{m[2] || '*'}"
    end
    [out, consts.sort]
  end

  def test_a_method_whose_name_code_that_ran_holds_is_recorded
    out, methods = run_tracked("require 'mime'\np Rack::Mime.mime_type('.a')\n", methods: true)
    assert_equal %(\"x/y\"\n), out
    assert_equal ["lib/mime.rb: mime_type"], methods
  end

  def test_a_method_got_by_a_name_made_at_run_time_is_recorded
    out, methods = run_tracked("require 'mime'\np Rack::Mime.method('oth' + 'er').arity\n", methods: true)
    assert_equal "0\n", out
    assert_equal ["lib/mime.rb: other"], methods
    out, methods = run_tracked("require 'user'\np User.instance_method('dyn' + 'amic').arity\n", methods: true)
    assert_equal "1\n", out
    assert_equal ["lib/user.rb: dynamic"], methods
  end

  # A file outside the repository that only holds a method's name reads
  # nothing of it; one whose call fails on arity (ArgumentError before the
  # method runs: Coverage does not count it) names it, however it called.
  def test_a_call_that_fails_on_arity_outside_the_repository_is_recorded
    File.write(File.join(@outside, "caller.rb"), <<~RUBY)
      module Caller
        def self.go(m) = m.other
        def self.try = (Rack::Mime.public_send(:"oth\#{'er'}", 1) rescue ArgumentError; :failed)
      end
    RUBY
    out, methods = run_tracked("require 'mime'\nrequire 'caller'\np 1\n", methods: true)
    assert_equal "1\n", out
    assert_equal [], methods
    out, methods = run_tracked("require 'mime'\nrequire 'caller'\np Caller.try\n", methods: true)
    assert_equal ":failed\n", out
    assert_equal ["lib/mime.rb: other"], methods
  end

  def test_a_method_that_ran_records_the_constants_it_names
    out, consts = run_tracked("require 'mime'\np Rack::Mime.mime_type('.a')\n")
    assert_equal %(\"x/y\"\n), out
    assert_equal ["lib/mime.rb: Rack::Mime::MIME_TYPES"], consts
  end

  def test_a_constant_no_code_that_ran_names_is_not_recorded
    out, consts = run_tracked("require 'mime'\np Rack::Mime.other\n")
    assert_equal "2\n", out
    assert_equal [], consts
  end

  def test_module_level_code_of_another_file_names_its_constants
    out, consts = run_tracked("require 'user'\np User::DEFAULT\n")
    assert_equal "2\n", out
    # (User::DEFAULT: the script itself reads it.)
    assert_equal ["lib/mime.rb: Rack::Mime::OTHER", "lib/user.rb: User::DEFAULT"], consts
  end

  def test_a_name_given_to_const_get_at_run_time
    out, consts = run_tracked("require 'user'\np User.new.dynamic('MIME' + '_TYPES').size\n")
    assert_equal "1\n", out
    assert_equal ["lib/mime.rb: Rack::Mime::MIME_TYPES", "lib/mime.rb: Rack::Mime::OTHER"], consts
  end

  def test_names_out_of_constants
    out, consts = run_tracked("require 'mime'\nRack::Mime.constants.each { |c| eval(\"Rack::Mime::\#{c}\") }\np 1\n")
    assert_equal "1\n", out
    assert_equal ["lib/mime.rb: Rack::Mime::MIME_TYPES", "lib/mime.rb: Rack::Mime::OTHER",
                  "lib/mime.rb: Rack::Mime::UNREAD"], consts
  end

  def test_a_file_outside_the_repository_that_names_one
    out, consts = run_tracked("require 'mime'\nrequire 'gem'\np 1\n")
    assert_equal "1\n", out
    assert_equal ["lib/mime.rb: Rack::Mime::UNREAD"], consts
  end

  def test_a_define_method_block_is_module_level_code
    out, consts = run_tracked("require 'dyn'\np Dyn.new.block\n")
    assert_equal "1\n", out
    assert_equal ["lib/dyn.rb: Dyn::K"], consts
  end

  def test_a_method_made_by_eval_is_every_constant_of_every_file
    out, consts = run_tracked("require 'dyn'\nrequire 'mime'\np Dyn.new.evald\n")
    assert_equal "3\n", out
    assert_equal ["lib/dyn.rb: *", "lib/dyn.rb: Dyn::K", "lib/mime.rb: *"], consts
  end

  # A string of bytes that are no UTF-8 text (rack's spec_utils.rb,
  # spec_multipart.rb and three more): its analysis stays precise.
  def test_a_binary_string_literal_names_nothing_and_costs_no_precision
    File.write(File.join(@root, "lib", "bytes.rb"), "module Bytes\n  def self.bom = \"\\xFF\\xFE\"\nend\n")
    out, consts = run_tracked("require 'mime'\nrequire 'bytes'\np Rack::Mime.mime_type('.a'), Bytes.bom.bytesize\n")
    assert_equal %(\"x/y\"\n2\n), out
    assert_equal ["lib/mime.rb: Rack::Mime::MIME_TYPES"], consts
  end

  # The main script is compiled before the tracker starts Coverage: its
  # constant references are all uses, and it is read as data (file level).
  def test_the_main_script_names_what_it_holds_and_is_data
    out, paths = run_script(@root, @outside, "require 'mime'\nexit(Rack::Mime::OTHER == 1 ? 0 : 1)\n",
                            load_path: [@outside])
    assert_equal "", out
    assert_includes paths, "#{@root}/t.rb/\x01ste-data"
    assert_includes paths, "#{@root}/lib/mime.rb/\x01ste-name:Rack::Mime::OTHER"
    refute(paths.any? { |p| p.end_with?("/\x01ste-namespace") }, paths.inspect)
  end

  def test_code_given_by_e_names_the_words_of_the_command_line
    records = File.join(@outside, "records")
    File.write(File.join(@outside, "recorder.rb"), RubyTrackedRun::RECORDER)
    File.write(records, "")
    env = { "STE_DEFINITIONS" => @root, "STE_TEST_RECORDS" => records, "RUBYOPT" => nil, "RUBYLIB" => nil }
    args = [RbConfig.ruby, "-I", File.join(@root, "lib"), "-r", RubyTrackedRun::TRACKER, "-r",
            File.join(@outside, "recorder.rb"), "-e", "require 'mime'; exit(Rack::Mime::OTHER == 1 ? 0 : 1)"]
    system(env, *args, chdir: @root, exception: true)
    paths = File.readlines(records).map { |l| l.chomp.undump }
    assert_includes paths, "#{@root}/lib/mime.rb/\x01ste-name:Rack::Mime::OTHER"
    refute(paths.any? { |p| p.end_with?("/\x01ste-namespace") }, paths.inspect)
  end

  def test_a_file_that_no_longer_parses_is_every_constant_of_every_file
    code = "require 'user'\nFile.write(File.join(__dir__, 'lib/user.rb'), 'def (')\np 1\n"
    out, consts = run_tracked(code)
    assert_equal "1\n", out
    assert_equal ["lib/mime.rb: *", "lib/user.rb: *"], consts
  end
end
