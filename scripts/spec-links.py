# One-off (issue 29): turns "SPEC section N" / "SPEC N" in the code into links to docs/rules.md by section
# number. Kept only so that branches merged after it can be converted the same way; delete once none remain.
import re, subprocess
ANCHORS={1:'the-log',2:'projections',3:'actors',4:'computer-behaviour',5:'sessions-hooks-notifications',6:'tools',7:'wire-and-cli',8:'postgresql-board',9:'installed-and-operated',10:'workspaces',11:'control-panel',12:'everyday-cli'}
files=subprocess.run(['git','grep','-l','SPEC','--','*.ts','*.js','*.mjs'],capture_output=True,text=True).stdout.split()
pat=re.compile(r'SPEC (?:sections? )?(\d+)((?:(?:, | and )\d+(?![0-9]))*)')
def link(n): return 'docs/rules.md#'+ANCHORS[int(n)]
def rep(m):
    nums=[m.group(1)]+re.findall(r'\d+', m.group(2))
    links=[link(n) for n in nums]
    return links[0] if len(links)==1 else ', '.join(links[:-1])+' and '+links[-1]
for f in files:
    s=open(f).read(); o=s
    s=pat.sub(rep,s)
    s=s.replace('(SPEC: logged on the first wait only)','(docs/rules.md#computer-behaviour: logged on the first wait only)')
    s=s.replace('SPEC_RULE','ID_RULE')
    s=s.replace('to its SPEC path','to its documented path (docs/http-api.md)')
    if s!=o: open(f,'w').write(s)
