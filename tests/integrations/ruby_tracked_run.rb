# frozen_string_literal: true

# What ruby_positions_test.rb and ruby_const_reads_test.rb share: the Ruby
# definition tracker (integrations/ruby/ste_defs.rb) started in a real
# ruby on a script, with its stats written to a file instead, so that a
# test reads exactly the records the process would have made.

require "rbconfig"

module RubyTrackedRun
  TRACKER = File.expand_path("../../integrations/ruby/ste_defs.rb", __dir__)
  RECORDER = <<~RUBY
    module SteDefs
      class << self
        alias_method :real_stat, :stat
        def stat(path)
          File.write(ENV.fetch("STE_TEST_RECORDS"), path.dump + "\\n", mode: "a")
          real_stat(path)
        end
      end
    end
  RUBY

  # Writes `code` to ROOT/t.rb and runs it in ROOT with ROOT/lib and
  # `load_path` on the load path, tracked (the tracker, then the recorder,
  # written to OUTSIDE) unless `tracked` is false; `extra` adds to the
  # environment. Returns [stdout and stderr, the paths stat'ed, in order].
  def run_script(root, outside, code, tracked: true, extra: {}, load_path: [])
    recorder = File.join(outside, "recorder.rb")
    File.write(recorder, RECORDER)
    script = File.join(root, "t.rb")
    File.write(script, code)
    records = File.join(outside, "records")
    File.write(records, "")
    env = { "STE_DEFINITIONS" => root, "STE_TEST_RECORDS" => records, "RUBYOPT" => nil, "RUBYLIB" => nil }
    args = [RbConfig.ruby, "-I", File.join(root, "lib")] + load_path.flat_map { |dir| ["-I", dir] }
    args += ["-r", TRACKER, "-r", recorder] if tracked
    out = IO.popen(env.merge(extra), args + [script], err: %i[child out], chdir: root, &:read)
    [out, File.readlines(records).map { |l| l.chomp.undump }]
  end
end
